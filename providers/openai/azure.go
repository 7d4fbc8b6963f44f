package openai

import (
	"net/url"

	"github.com/runlet/runlet/internal/httpc"
)

// AzureScope is the scope of the Entra ID (Azure AD) tokens Azure OpenAI
// takes as "Authorization: Bearer": a Config.Token from an Azure
// credential asks for it.
const AzureScope = "https://cognitiveservices.azure.com/.default"

// AzureBaseURL returns the base URL (Config.BaseURL, with the Azure
// preset) of an Azure OpenAI resource at endpoint, such as
// https://RESOURCE.openai.azure.com.
//
// Without an apiVersion it is the v1 API, {endpoint}/openai/v1, which both
// adapters reach with the deployment's name as the model. With one it is
// the older, versioned API, whose every request carries ?api-version=: for
// Chat Completions, a deployment's URL,
// {endpoint}/openai/deployments/{deployment}?api-version={apiVersion};
// for Responses (deployment empty; the model names the deployment),
// {endpoint}/openai?api-version={apiVersion}, so requests go to
// /openai/responses.
func AzureBaseURL(endpoint, deployment, apiVersion string) string {
	if apiVersion == "" {
		return httpc.JoinURL(endpoint, "/openai/v1")
	}
	path := "/openai"
	if deployment != "" {
		path += "/deployments/" + url.PathEscape(deployment)
	}
	return httpc.JoinURL(endpoint, path+"?api-version="+url.QueryEscape(apiVersion))
}
