package session

import (
	"context"
	"errors"
	"fmt"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
)

// A prompt's images (Part.Image) go through here. Start checks them before
// anything is stored: the turn's model must take images (the catalog's
// "images", which the configuration can change), and each must be a PNG,
// JPEG, GIF or WebP image darman can read; one over the providers' limits
// is scaled down once, to llm.PromptImageLimit. The turn keeps each one
// in the store's blobs (Store.PutBlob, one copy per session however many
// records refer to it) and the user's message gets a file part that
// refers to it by key (agent.File.Blob); a request reads the bytes back
// when it sends the history.

// ErrNoImages is returned (wrapped) by Start when the prompt has an image
// and the turn's model does not take images.
var ErrNoImages = errors.New("the model does not take images")

// Image is a prompt part of an image's bytes; mime may be "" (the bytes
// say what they are) and name "" (a pasted image has none).
func Image(name, mime string, data []byte) Part {
	if data == nil {
		data = []byte{}
	}
	return Part{File: name, MIME: mime, Image: data}
}

// promptImage is one of a turn's images, fitted, before it is stored.
type promptImage struct {
	name string
	img  llm.Image
	info llm.ImageInfo
}

func hasImages(parts []Part) bool {
	for _, p := range parts {
		if p.Image != nil {
			return true
		}
	}
	return false
}

// takeImages checks and fits the prompt's images for the prepared turn.
func (t *turn) takeImages(parts []Part) error {
	if !hasImages(parts) {
		return nil
	}
	if m := t.provider.Model(t.model); !m.Images {
		return fmt.Errorf("%w: %s takes text only; choose a model that takes images, or send the prompt without them "+
			"(a model darman's catalog does not know counts as text-only on OpenAI-compatible servers: "+
			`set "images": true for it under the provider's models in the configuration if it does take them)`, ErrNoImages, t.modelRef)
	}
	n := 0
	for _, p := range parts {
		if p.Image == nil {
			continue
		}
		n++
		name := p.File
		if name == "" {
			name = fmt.Sprintf("image %d", n)
		}
		img, info, err := llm.FitImage(llm.Image{MediaType: p.MIME, Data: p.Image}, llm.PromptImageLimit)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		t.images = append(t.images, promptImage{name: p.File, img: img, info: info})
	}
	return nil
}

// saveImages stores the turn's images as file parts of the user's
// message and returns their files, as stored.
func (t *turn) saveImages(ctx context.Context, message agent.ID) ([]agent.File, error) {
	if len(t.images) == 0 {
		return nil, nil
	}
	blobs := t.svc.opts.Store
	var files []agent.File
	for _, pi := range t.images {
		key, err := blobs.PutBlob(ctx, t.id, pi.img.Data)
		if err != nil {
			return nil, fmt.Errorf("storing the prompt's image: %w", err)
		}
		f := agent.File{Name: pi.name, MIME: pi.img.MediaType, Blob: key, Size: len(pi.img.Data), Width: pi.info.Width, Height: pi.info.Height}
		t.save(ctx, agent.Part{ID: agent.NewPartID(), MessageID: message, SessionID: t.id, Kind: agent.PartFile, File: &f})
		files = append(files, f)
	}
	t.images = nil
	return files, nil
}

// withImages reads back the images the user's messages of msgs refer to,
// for the request. For a model that does not take images (the session
// changed model since) each one is a line of text saying it was left out.
func (t *turn) withImages(ctx context.Context, msgs []agent.MessageWithParts) ([]agent.MessageWithParts, error) {
	blobs := t.svc.opts.Store
	takes := t.provider.Model(t.model).Images
	var out []agent.MessageWithParts
	for i, m := range msgs {
		if m.Message.Role != agent.RoleUser {
			continue
		}
		var parts []agent.Part
		for j, p := range m.Parts {
			if p.Kind != agent.PartFile || p.File == nil || p.File.Blob == "" || len(p.File.Data) > 0 {
				continue
			}
			if parts == nil {
				parts = append([]agent.Part(nil), m.Parts...)
			}
			var data []byte
			var err error
			if takes {
				data, err = blobs.Blob(ctx, t.id, p.File.Blob)
				if err != nil && ctx.Err() != nil {
					return nil, ctx.Err()
				}
			}
			switch {
			case !takes:
				parts[j] = agent.Part{ID: p.ID, MessageID: p.MessageID, SessionID: p.SessionID, Kind: agent.PartText,
					Text: fmt.Sprintf("(an image the user attached, %s, is left out: %s takes text only)", imageLabel(p.File), t.modelRef)}
			case err != nil:
				t.svc.log.Warn("cannot read a prompt's image back", "session", t.id, "blob", p.File.Blob, "err", err)
				parts[j] = agent.Part{ID: p.ID, MessageID: p.MessageID, SessionID: p.SessionID, Kind: agent.PartText,
					Text: fmt.Sprintf("(an image the user attached, %s, could not be read back from darman's store)", imageLabel(p.File))}
			default:
				f := *p.File
				f.Data = data
				p.File = &f
				parts[j] = p
			}
		}
		if parts == nil {
			continue
		}
		if out == nil {
			out = append([]agent.MessageWithParts(nil), msgs...)
		}
		out[i] = agent.MessageWithParts{Message: m.Message, Parts: parts}
	}
	if out == nil {
		return msgs, nil
	}
	return out, nil
}

// imageLabel names a stored image for the model and for transcripts.
func imageLabel(f *agent.File) string {
	s := f.MIME
	if f.Width > 0 {
		s = fmt.Sprintf("%s %d×%d", s, f.Width, f.Height)
	}
	if f.Name != "" {
		s = f.Name + ", " + s
	}
	return s
}
