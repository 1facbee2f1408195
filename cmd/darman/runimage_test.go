package main_test

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
)

func pictureOf(t *testing.T, w, h int) image.Image {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(x), uint8(y), 90, 255})
		}
	}
	return img
}

func encoded(t *testing.T, img image.Image, as string) string {
	var buf bytes.Buffer
	var err error
	if as == "png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

// darman run --image attaches each file to the prompt: the model's request
// carries both, the oversized one scaled down to the provider's limit.
func TestRunAttachesImages(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Two pictures."}}})
	wide := e.write("shots/wide.png", encoded(t, pictureOf(t, 2000, 1000), "png"))
	small := encoded(t, pictureOf(t, 64, 48), "jpeg")
	e.write("small.jpg", small)
	out := e.ok("run", "--image", wide, "--image", "small.jpg", "what do these show?")
	if !strings.Contains(out, "Two pictures.") {
		t.Errorf("stdout: %s", out)
	}
	calls := srv.ModelCalls()
	if len(calls) != 1 {
		t.Fatalf("%d model calls", len(calls))
	}
	imgs := calls[0].Images
	if len(imgs) != 2 {
		t.Fatalf("the request carried %d images", len(imgs))
	}
	lim := llm.AnthropicImageLimit
	if imgs[0].Width != lim.MaxEdge || imgs[0].Height != lim.MaxEdge/2 || len(imgs[0].Data) > lim.MaxBytes {
		t.Errorf("the wide image went out as %s %d×%d, %d bytes", imgs[0].MediaType, imgs[0].Width, imgs[0].Height, len(imgs[0].Data))
	}
	if imgs[1].MediaType != "image/jpeg" || string(imgs[1].Data) != small {
		t.Errorf("the small JPEG went out as %s, %d bytes", imgs[1].MediaType, len(imgs[1].Data))
	}
	if calls[0].Conversation != "what do these show?" {
		t.Errorf("conversation %q", calls[0].Conversation)
	}
}

// An image alone is a prompt, as the editors' chat takes it: the request
// carries the image and no empty text.
func TestRunTakesAnImageAlone(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "A gradient."}}})
	e.write("small.jpg", encoded(t, pictureOf(t, 64, 48), "jpeg"))
	if out := e.ok("run", "--image", "small.jpg"); !strings.Contains(out, "A gradient.") {
		t.Errorf("stdout: %s", out)
	}
	calls := srv.ModelCalls()
	if len(calls) != 1 || len(calls[0].Images) != 1 {
		t.Fatalf("%d model calls; want one with the image", len(calls))
	}
	for _, block := range calls[0].Get("messages.0.content").Array() {
		if block.Get("type").String() == "text" && strings.TrimSpace(block.Get("text").String()) == "" {
			t.Errorf("the prompt carries an empty text block: %s", calls[0].Get("messages.0.content").Raw)
		}
	}
	if _, errs, code := e.run("run"); code == 0 || !strings.Contains(errs, "--image") {
		t.Errorf("darman run with nothing: exit %d\n%s", code, errs)
	}
}

// A file that is not an image, and an image for a text-only model, are
// refused before the model is called, saying why.
func TestRunRefusesUnusableImages(t *testing.T) {
	e := newEnv(t)
	srv := e.withModel(t, llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}})
	e.write("notes.png", "these are notes, not a picture")
	_, errs, code := e.run("run", "--image", "notes.png", "look")
	if code == 0 || !strings.Contains(errs, "--image notes.png") || !strings.Contains(errs, "not a PNG, JPEG, GIF or WebP") {
		t.Errorf("exit %d, stderr:\n%s", code, errs)
	}
	_, errs, code = e.run("run", "--image", "missing.png", "look")
	if code == 0 || !strings.Contains(errs, "missing.png") {
		t.Errorf("a missing file: exit %d, stderr:\n%s", code, errs)
	}

	e.write("darman.json", fmt.Sprintf(`{
		"model": "anthropic/claude-sonnet-4-5",
		"provider": {"anthropic": {"baseURL": %q, "apiKey": "${env:ANTHROPIC_API_KEY}",
			"models": {"claude-sonnet-4-5": {"images": false}}}}
	}`, srv.URL))
	e.write("pic.png", encoded(t, pictureOf(t, 8, 8), "png"))
	_, errs, code = e.run("run", "--image", "pic.png", "look")
	if code == 0 || !strings.Contains(errs, "takes text only") {
		t.Errorf("a text-only model: exit %d, stderr:\n%s", code, errs)
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
}
