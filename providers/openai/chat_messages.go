package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/runlet/runlet"
	"github.com/runlet/runlet/internal/dataurl"
)

func chatOnlyToolResults(msg runlet.Message) bool {
	for _, p := range msg.Parts {
		if _, ok := p.(runlet.ToolResultPart); !ok {
			return false
		}
	}
	return true
}

// chatJoinDetails returns the one array as it was, or several arrays
// joined into one; nil for none.
func chatJoinDetails(arrays []string) json.RawMessage {
	switch len(arrays) {
	case 0:
		return nil
	case 1:
		return json.RawMessage(arrays[0])
	}
	var b []byte
	for _, a := range arrays {
		inner := bytes.TrimSpace([]byte(a))
		if len(inner) < 2 || inner[0] != '[' {
			continue
		}
		inner = bytes.TrimSpace(inner[1 : len(inner)-1])
		if len(inner) == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ',')
		}
		b = append(b, inner...)
	}
	return json.RawMessage("[" + string(b) + "]")
}

func chatImage(p runlet.ImagePart) (string, error) {
	if len(p.Data) > 0 {
		return dataurl.Encode(p.MediaType, p.Data), nil
	}
	if p.URL == "" {
		return "", fmt.Errorf("image part has neither URL nor data")
	}
	return p.URL, nil
}

// chatAudioPart is an audio part as input_audio, which takes wav and mp3
// only, inline.
func chatAudioPart(p runlet.AudioPart) (chatContentPart, error) {
	if mt, d, ok := dataurl.Inline(p.URL, p.MediaType, p.Data); ok {
		p.MediaType, p.Data = mt, d
	}
	if len(p.Data) == 0 {
		return chatContentPart{}, fmt.Errorf("the Chat Completions API takes audio as inline data only")
	}
	cp, err := chatFilePart(runlet.FilePart{MediaType: p.MediaType, Data: p.Data})
	if err == nil && cp.InputAudio == nil {
		err = fmt.Errorf("the Chat Completions API takes wav and mp3 audio only, not %s", p.MediaType)
	}
	return cp, err
}

func chatFilePart(p runlet.FilePart) (chatContentPart, error) {
	if mt, d, ok := dataurl.Inline(p.URL, p.MediaType, p.Data); ok {
		p.MediaType, p.Data = mt, d // a data: URL is inline data
	}
	if len(p.Data) == 0 {
		if p.URL != "" {
			return chatContentPart{}, fmt.Errorf("the Chat Completions API takes files as inline data, not by URL (%s)", p.Name)
		}
		return chatContentPart{}, fmt.Errorf("file part %q has no data", p.Name)
	}
	mt := p.MediaType
	if mt == "" {
		mt = http.DetectContentType(p.Data)
	}
	switch strings.ToLower(mt) {
	case "audio/wav", "audio/x-wav", "audio/wave", "audio/vnd.wave":
		return chatContentPart{Type: "input_audio", InputAudio: &chatInputAudio{Data: base64.StdEncoding.EncodeToString(p.Data), Format: "wav"}}, nil
	case "audio/mpeg", "audio/mp3":
		return chatContentPart{Type: "input_audio", InputAudio: &chatInputAudio{Data: base64.StdEncoding.EncodeToString(p.Data), Format: "mp3"}}, nil
	}
	name := p.Name
	if name == "" {
		name = "file"
	}
	return chatContentPart{Type: "file", File: &chatFile{Filename: name, FileData: dataurl.Encode(mt, p.Data)}}, nil
}
