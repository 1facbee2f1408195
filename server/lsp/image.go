package lsp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/server/lsp/internal/update"
	"github.com/darman-dev/darman/server/rpc"
)

// promptImage is an image of darman.prompt's images: its bytes in base64
// (a data: URL is taken too), its type, and a name for the record.
type promptImage struct {
	Type     string `json:"type,omitempty"` // "image", when set
	MimeType string `json:"mimeType,omitempty"`
	Data     string `json:"data"`
	Name     string `json:"name,omitempty"`
}

// imageParts reads darman.prompt's images as prompt parts, refusing one
// that is not an image darman can send with what is wrong with it.
func imageParts(name string, imgs []promptImage) ([]session.Part, error) {
	var out []session.Part
	for i, img := range imgs {
		if img.Type != "" && img.Type != "image" {
			return nil, rpc.InvalidParams("%s: images[%d]: type %q; only \"image\" is taken", name, i, img.Type)
		}
		b64 := img.Data
		if rest, ok := strings.CutPrefix(b64, "data:"); ok {
			head, data, found := strings.Cut(rest, ";base64,")
			if !found {
				return nil, rpc.InvalidParams("%s: images[%d]: a data: URL that is not base64", name, i)
			}
			if img.MimeType == "" {
				img.MimeType = head
			}
			b64 = data
		}
		if len(b64) > base64.StdEncoding.EncodedLen(llm.MaxImageInput) {
			return nil, rpc.InvalidParams("%s: images[%d]: over %d MiB; attach a smaller image", name, i, llm.MaxImageInput>>20)
		}
		data, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			return nil, rpc.InvalidParams("%s: images[%d]: data is not base64: %v", name, i, err)
		}
		info, err := llm.InspectImage(data)
		if err != nil {
			return nil, rpc.InvalidParams("%s: images[%d]: %v", name, i, err)
		}
		out = append(out, session.Image(img.Name, info.MediaType, data))
	}
	return out, nil
}

// cmdSessionImage answers darman.session.image {uri} (or {sessionId,
// key}): a stored image's bytes, {mimeType, data}, for a client that
// shows the images darman.session.load links to.
func (s *Server) cmdSessionImage(ctx context.Context, arg json.RawMessage) (any, error) {
	const name = "darman.session.image"
	var a struct {
		URI       string `json:"uri,omitempty"`
		SessionID string `json:"sessionId,omitempty"`
		Key       string `json:"key,omitempty"`
	}
	if err := args(name, arg, &a); err != nil {
		return nil, err
	}
	if sid, key, ok := update.ParseImageURI(a.URI); ok {
		a.SessionID, a.Key = sid, key
	}
	if a.SessionID == "" || a.Key == "" {
		return nil, rpc.InvalidParams("%s: pass the uri of an image darman.session.load linked to (darman-image:<session>/<key>)", name)
	}
	id, err := sessionArg(a.SessionID)
	if err != nil {
		return nil, rpc.InvalidParams("%s: %v", name, err)
	}
	ag, err := s.agent.get(ctx)
	if err != nil {
		return nil, err
	}
	data, err := ag.Store.Blob(ctx, id, a.Key)
	if err != nil {
		return nil, err
	}
	info, err := llm.InspectImage(data)
	if err != nil {
		return nil, fmt.Errorf("%s: the stored image: %w", name, err)
	}
	return map[string]any{"mimeType": info.MediaType, "data": base64.StdEncoding.EncodeToString(data), "width": info.Width, "height": info.Height}, nil
}
