package acp

import (
	"encoding/base64"
	"encoding/json"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/internal/acpupdate"
)

// imagePart reads an ACP image content block, {type: "image", data
// (base64), mimeType, uri?}, as a prompt part. Whether the session's model
// takes images is the turn's to say (session.ErrNoImages).
func imagePart(i int, raw json.RawMessage) (session.Part, error) {
	var b struct {
		Data     string `json:"data"`
		MimeType string `json:"mimeType"`
		URI      string `json:"uri"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return session.Part{}, invalidParams("session/prompt: prompt[%d]: %v", i, err)
	}
	if b.Data == "" {
		return session.Part{}, invalidParams("session/prompt: prompt[%d]: an image needs its data, in base64", i)
	}
	if len(b.Data) > base64.StdEncoding.EncodedLen(llm.MaxImageInput) {
		return session.Part{}, invalidParams("session/prompt: prompt[%d]: an image over %d MiB; attach a smaller one", i, llm.MaxImageInput>>20)
	}
	data, err := base64.StdEncoding.DecodeString(b.Data)
	if err != nil {
		return session.Part{}, invalidParams("session/prompt: prompt[%d]: the image's data is not base64: %v", i, err)
	}
	info, err := llm.InspectImage(data)
	if err != nil {
		return session.Part{}, invalidParams("session/prompt: prompt[%d]: %v", i, err)
	}
	name := ""
	if b.URI != "" {
		name = pathOf(b.URI)
	}
	return session.Image(name, info.MediaType, data), nil
}

// hasImage reports whether a prompt holds an image.
func hasImage(parts []session.Part) bool {
	for _, p := range parts {
		if p.Image != nil {
			return true
		}
	}
	return false
}

// imageContent is an ACP image content block: the image's bytes in
// base64 and their type.
type imageContent struct {
	Type     string `json:"type"` // "image"
	MimeType string `json:"mimeType"`
	Data     string `json:"data"`
}

// historyImage replays a stored image of a user's message for
// session/load as the block the client sent: a user_message_chunk of
// type image with the stored bytes (blob reads them). ok is false for any
// other part. An image whose bytes the store no longer has is replayed as
// a line of text that says so, not dropped.
func historyImage(role agent.Role, p agent.Part, blob func(key string) ([]byte, error)) (update, bool) {
	if acpupdate.StoredImage(role, p) == nil {
		return update{}, false
	}
	data, err := blob(p.File.Blob)
	if err != nil {
		return update{SessionUpdate: "user_message_chunk", Content: text(acpupdate.ImageLabel(p.File) + " (its bytes are no longer in darman's store)")}, true
	}
	mime := p.File.MIME
	if mime == "" {
		if info, err := llm.InspectImage(data); err == nil {
			mime = info.MediaType
		}
	}
	return update{SessionUpdate: "user_message_chunk", Image: &imageContent{Type: "image", MimeType: mime, Data: base64.StdEncoding.EncodeToString(data)}}, true
}
