package llm_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/jpeg"
	gopng "image/png"
	"strings"
	"testing"

	"github.com/darman-dev/darman/agent/llm"
	"github.com/darman-dev/darman/agent/llm/llmtest"
)

// An image in a user message reaches each API in its own wire format,
// byte for byte when it is within the provider's limit.
func TestPromptImageInEachAPI(t *testing.T) {
	small := llmtest.PNG(40, 30)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "A gradient."}}})
			c := newClient(t, a.settings(srv), fastRetry)
			req := &llm.Request{Model: "vision-model", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
				llm.Text{Text: "What is this?"}, llm.Image{MediaType: "image/png", Data: small},
			}}}}
			if _, err := llm.Collect(c.Stream(ctxT(t), req)); err != nil {
				t.Fatal(err)
			}
			calls := srv.ModelCalls()
			if len(calls) != 1 || calls[0].API != a.api {
				t.Fatalf("calls: %+v", calls)
			}
			imgs := calls[0].Images
			if len(imgs) != 1 || imgs[0].Role != "user" || imgs[0].MediaType != "image/png" || !bytes.Equal(imgs[0].Data, small) ||
				imgs[0].Width != 40 || imgs[0].Height != 30 {
				t.Errorf("images the server saw: %+v", imgs)
			}
			if calls[0].Conversation != "What is this?" {
				t.Errorf("conversation %q", calls[0].Conversation)
			}
		})
	}
}

// An image over a provider's limit is scaled down to it on the way out,
// keeping its aspect ratio; the caller's request is left as it was.
func TestOversizedImageIsResizedPerProvider(t *testing.T) {
	big := llmtest.PNG(2100, 300)
	for _, a := range apis {
		t.Run(a.name, func(t *testing.T) {
			srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "Seen."}}})
			c := newClient(t, a.settings(srv), fastRetry)
			req := &llm.Request{Model: "vision-model", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
				llm.Text{Text: "Look."}, llm.Image{MediaType: "image/png", Data: big},
			}}}}
			if _, err := llm.Collect(c.Stream(ctxT(t), req)); err != nil {
				t.Fatal(err)
			}
			lim := llm.OpenAIImageLimit
			if a.api == llmtest.APIAnthropic {
				lim = llm.AnthropicImageLimit
			}
			imgs := srv.ModelCalls()[0].Images
			if len(imgs) != 1 {
				t.Fatalf("images: %d", len(imgs))
			}
			got := imgs[0]
			if h := 300 * lim.MaxEdge / 2100; got.Width != lim.MaxEdge || got.Height != h || len(got.Data) > lim.MaxBytes {
				t.Errorf("sent %s %d×%d, %d bytes; want %d×%d within %d bytes", got.MediaType, got.Width, got.Height, len(got.Data), lim.MaxEdge, h, lim.MaxBytes)
			}
			if sent := req.Messages[0].Parts[1].(llm.Image); !bytes.Equal(sent.Data, big) {
				t.Error("the caller's request was modified")
			}
		})
	}
}

func TestFitImage(t *testing.T) {
	lim := llm.ImageLimit{MaxEdge: 100, MaxBytes: 40 << 10}
	t.Run("within the limit is kept as it is, its type corrected", func(t *testing.T) {
		data := llmtest.PNG(50, 20)
		got, info, err := llm.FitImage(llm.Image{MediaType: "image/jpeg", Data: data}, lim)
		if err != nil || got.MediaType != "image/png" || !bytes.Equal(got.Data, data) || info.Width != 50 || info.Height != 20 {
			t.Errorf("%s %d bytes %+v, %v", got.MediaType, len(got.Data), info, err)
		}
	})
	t.Run("a big photo becomes a JPEG within the bytes", func(t *testing.T) {
		var buf bytes.Buffer
		src, _ := gopng.Decode(bytes.NewReader(llmtest.PNG(400, 400)))
		if err := jpeg.Encode(&buf, src, &jpeg.Options{Quality: 100}); err != nil {
			t.Fatal(err)
		}
		got, info, err := llm.FitImage(llm.Image{Data: buf.Bytes()}, llm.ImageLimit{MaxEdge: 300, MaxBytes: 8 << 10})
		if err != nil {
			t.Fatal(err)
		}
		if got.MediaType != "image/jpeg" || len(got.Data) > 8<<10 || max(info.Width, info.Height) > 300 {
			t.Errorf("%s %d bytes %+v", got.MediaType, len(got.Data), info)
		}
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(got.Data)); err != nil || cfg.Width != info.Width {
			t.Errorf("the result does not decode as said: %+v %v", cfg, err)
		}
	})
	for _, bad := range []struct {
		name string
		data []byte
		want string
	}{
		{"not an image", []byte("hello, this is text"), "not a PNG, JPEG, GIF or WebP"},
		{"empty", nil, "no bytes"},
		{"a truncated PNG", llmtest.PNG(300, 300)[:200], "damaged"},
		{"a bomb", bombPNG(t), "megapixels"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, _, err := llm.FitImage(llm.Image{MediaType: "image/png", Data: bad.data}, lim)
			if !errors.Is(err, llm.ErrImage) || !strings.Contains(err.Error(), bad.want) {
				t.Errorf("err = %v; want ErrImage saying %q", err, bad.want)
			}
		})
	}
}

// bombPNG is the header of a PNG that claims 40000×40000 pixels.
func bombPNG(t *testing.T) []byte {
	data := llmtest.PNG(1, 1)
	// IHDR's width and height are bytes 16..23.
	out := append([]byte(nil), data...)
	for i, b := range []byte{0, 0, 0x9c, 0x40, 0, 0, 0x9c, 0x40} {
		out[16+i] = b
	}
	binary.BigEndian.PutUint32(out[29:], crc32.ChecksumIEEE(out[12:29]))
	return out
}

// A request with an image that cannot be used fails before anything is
// sent, saying what is wrong with it.
func TestUnusableImageRefusedBeforeSending(t *testing.T) {
	srv := llmtest.Start(t, llmtest.Script{Steps: []llmtest.Step{{Text: "never"}}})
	c := newClient(t, apis[0].settings(srv), fastRetry)
	req := &llm.Request{Model: "m", Messages: []llm.Message{{Role: llm.RoleUser, Parts: []llm.Part{
		llm.Text{Text: "x"}, llm.Image{MediaType: "image/png", Data: []byte("not a png at all")},
	}}}}
	_, err := llm.Collect(c.Stream(ctxT(t), req))
	var e *llm.Error
	if !errors.As(err, &e) || e.Kind != llm.ErrBadRequest || !strings.Contains(err.Error(), "not a PNG") {
		t.Errorf("err = %v", err)
	}
	if n := len(srv.ModelCalls()); n != 0 {
		t.Errorf("%d calls sent", n)
	}
}

// BenchmarkFitImage scales a 2200×1100 screenshot-sized PNG down to
// Anthropic's limit: what a pasted image costs once, when it is stored.
func BenchmarkFitImage(b *testing.B) {
	data := llmtest.PNG(2200, 1100)
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := llm.FitImage(llm.Image{Data: data}, llm.AnthropicImageLimit); err != nil {
			b.Fatal(err)
		}
	}
}
