package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent"
	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
	"github.com/darman-dev/darman/agent/session"
	"github.com/darman-dev/darman/agent/store"
)

// imageParts are the stored file parts of a session's user messages.
func imageParts(t *testing.T, f *fixture) []agent.Part {
	t.Helper()
	msgs, err := f.store.Messages(context.Background(), f.sess.ID)
	if err != nil {
		t.Fatal(err)
	}
	var out []agent.Part
	for _, m := range msgs {
		for _, p := range m.Parts {
			if p.Kind == agent.PartFile {
				out = append(out, p)
			}
		}
	}
	return out
}

// A prompt's image reaches the model; the store keeps its bytes once, as
// a blob the message's part refers to, and the next turn sends it again
// from there.
func TestPromptImageReachesModelStoredOnce(t *testing.T) {
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{Text: "A blue square."}, {Text: "Still blue."}}}, nil)
	pic := llmtest.PNG(40, 30)
	for _, text := range []string{"What is this?", "And this one?"} {
		res, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID,
			Prompt: []session.Part{{Text: text}, session.Image("shot.png", "image/png", pic)}})
		if err != nil || res.Err != nil {
			t.Fatalf("turn: %v %v", err, res.Err)
		}
	}
	calls := f.srv.ModelCalls()
	if len(calls) != 2 {
		t.Fatalf("%d model calls", len(calls))
	}
	for i, c := range calls {
		if len(c.Images) != i+1 {
			t.Fatalf("call %d carried %d images", i, len(c.Images))
		}
		for _, img := range c.Images {
			if !bytes.Equal(img.Data, pic) || img.MediaType != "image/png" || img.Role != "user" {
				t.Errorf("call %d: image %s %d×%d", i, img.MediaType, img.Width, img.Height)
			}
		}
	}
	parts := imageParts(t, f)
	if len(parts) != 2 {
		t.Fatalf("%d file parts stored", len(parts))
	}
	for _, p := range parts {
		if p.File.Blob == "" || len(p.File.Data) != 0 || p.File.Width != 40 || p.File.Height != 30 || p.File.Size != len(pic) || p.File.Name != "shot.png" {
			t.Errorf("stored part: %+v", p.File)
		}
		if rec, _ := json.Marshal(p); len(rec) > 1000 {
			t.Errorf("the part's record holds the image: %d bytes", len(rec))
		}
	}
	if parts[0].File.Blob != parts[1].File.Blob {
		t.Error("the same image got two blobs")
	}
	data, err := f.store.Blob(context.Background(), f.sess.ID, parts[0].File.Blob)
	if err != nil || !bytes.Equal(data, pic) {
		t.Errorf("blob: %d bytes, %v", len(data), err)
	}
	// The export carries the blob once, and deleting the session drops it.
	exp, err := f.store.Export(context.Background(), f.sess.ID)
	if err != nil || len(exp.Blobs) != 1 || !bytes.Equal(exp.Blobs[parts[0].File.Blob], pic) {
		t.Errorf("export blobs: %d, %v", len(exp.Blobs), err)
	}
	// Imported into another store, the session reads its image back.
	other, err := store.Open(context.Background(), t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := other.Import(context.Background(), exp); err != nil {
		t.Fatal(err)
	}
	if data, err := other.Blob(context.Background(), f.sess.ID, parts[0].File.Blob); err != nil || !bytes.Equal(data, pic) {
		t.Errorf("the imported blob: %d bytes, %v", len(data), err)
	}
	tampered := *exp
	tampered.Session.ID = agent.NewSessionID()
	tampered.Messages = nil
	tampered.Blobs = map[string][]byte{parts[0].File.Blob: []byte("other bytes")}
	if err := other.Import(context.Background(), &tampered); err == nil || !strings.Contains(err.Error(), "SHA-256") {
		t.Errorf("a blob that is not its key's: %v", err)
	}
	if err := f.store.DeleteSession(context.Background(), f.sess.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := f.store.Blob(context.Background(), f.sess.ID, parts[0].File.Blob); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the blob outlived its session: %v", err)
	}
}

// An image over the providers' limits is stored, and sent, scaled down;
// the user's message event names the image as stored, not as uploaded.
func TestPromptImageResizedWhenStored(t *testing.T) {
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Wide."}}}, nil)
	var user []agent.Event
	res, err := f.svc.Run(context.Background(), session.Turn{Session: f.sess.ID,
		Prompt: []session.Part{session.Image("", "", llmtest.PNG(2000, 1000))},
		Events: func(u session.Update) {
			if u.Event.Kind == agent.EventUserMessage {
				user = append(user, u.Event)
			}
		}})
	if err != nil || res.Err != nil {
		t.Fatalf("turn: %v %v", err, res.Err)
	}
	imgs := f.srv.ModelCalls()[0].Images
	lim := llm.AnthropicImageLimit
	if len(imgs) != 1 || imgs[0].Width != lim.MaxEdge || imgs[0].Height != lim.MaxEdge/2 || len(imgs[0].Data) > lim.MaxBytes {
		t.Fatalf("sent: %+v", imgs)
	}
	p := imageParts(t, f)
	if len(p) != 1 || p[0].File.Width != lim.MaxEdge {
		t.Fatalf("stored: %+v", p)
	}
	if len(user) != 1 || !reflect.DeepEqual(user[0].Images, []agent.File{*p[0].File}) || len(user[0].Images[0].Data) != 0 {
		t.Errorf("the user's message event names %+v; the store keeps %+v", user, *p[0].File)
	}
}

// A text-only model is not sent an image: the turn is refused before
// anything is stored, saying why and what to do.
func TestPromptImageRefusedForTextOnlyModel(t *testing.T) {
	no := false
	f := newFixture(t, fixtureOptions{script: llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}},
		models: map[string]llm.ModelOverride{"claude-sonnet-4-5": {Images: &no}}})
	_, err := f.svc.Start(context.Background(), session.Turn{Session: f.sess.ID,
		Prompt: []session.Part{{Text: "look"}, session.Image("a.png", "image/png", llmtest.PNG(4, 4))}})
	if !errors.Is(err, session.ErrNoImages) || !strings.Contains(err.Error(), "text only") {
		t.Fatalf("err = %v", err)
	}
	if n := len(f.srv.ModelCalls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
	if msgs, _ := f.store.Messages(context.Background(), f.sess.ID); len(msgs) != 0 {
		t.Errorf("%d messages stored", len(msgs))
	}
}

// Bytes that are not an image are refused with the reason.
func TestPromptBadImageRefused(t *testing.T) {
	f := setup(t, llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}}, nil)
	_, err := f.svc.Start(context.Background(), session.Turn{Session: f.sess.ID,
		Prompt: []session.Part{{Text: "look"}, session.Image("notes.png", "image/png", []byte("just text"))}})
	if !errors.Is(err, llm.ErrImage) || !strings.Contains(err.Error(), "notes.png") {
		t.Fatalf("err = %v", err)
	}
}
