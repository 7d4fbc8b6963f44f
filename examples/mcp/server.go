package main

import (
	"context"
	"fmt"
	"math"
	"strings"

	sdkmcp "github.com/modelcontextprotocol/go-sdk/mcp"
)

// ForecastArgs is the input of the demo server's weather.forecast tool.
type ForecastArgs struct {
	City string `json:"city" jsonschema:"the city, such as Paris"`
}

// ConvertArgs is the input of the demo server's units.c_to_f tool.
type ConvertArgs struct {
	Celsius float64 `json:"celsius" jsonschema:"a temperature in degrees Celsius"`
}

// Fahrenheit is the structured output of units.c_to_f.
type Fahrenheit struct {
	Fahrenheit float64 `json:"fahrenheit"`
}

// demoServer is a small MCP server with two tools. Their MCP names have
// dots, which model providers do not allow: the runlet tools are named
// weather_forecast and units_c_to_f.
func demoServer() *sdkmcp.Server {
	forecasts := map[string]string{"paris": "Paris: sunny, 18°C", "london": "London: light rain, 12°C", "tokyo": "Tokyo: clear, 21°C"}
	s := sdkmcp.NewServer(&sdkmcp.Implementation{Name: "demo", Version: "v0.1.0"}, nil)
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "weather.forecast", Description: "Returns today's forecast for a city, in Celsius."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in ForecastArgs) (*sdkmcp.CallToolResult, any, error) {
			f, ok := forecasts[strings.ToLower(in.City)]
			if !ok {
				// The model sees this as an is-error tool result.
				return nil, nil, fmt.Errorf("no forecast for %q; try Paris, London or Tokyo", in.City)
			}
			return &sdkmcp.CallToolResult{Content: []sdkmcp.Content{&sdkmcp.TextContent{Text: f}}}, nil, nil
		})
	// A structured result: the SDK also sends it as JSON text.
	sdkmcp.AddTool(s, &sdkmcp.Tool{Name: "units.c_to_f", Description: "Converts degrees Celsius to Fahrenheit."},
		func(ctx context.Context, _ *sdkmcp.CallToolRequest, in ConvertArgs) (*sdkmcp.CallToolResult, Fahrenheit, error) {
			return nil, Fahrenheit{math.Round((in.Celsius*9/5+32)*10) / 10}, nil
		})
	return s
}
