package llmtest

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	_ "image/gif" // registers GIF for image.DecodeConfig
	_ "image/jpeg"
	"image/png"
	"strings"

	"github.com/tidwall/gjson"
	_ "golang.org/x/image/webp"
)

// Image is an image a request carried, in any of the three wire formats:
// an Anthropic image block (in a user message or a tool result), a Chat
// Completions image_url part, a Responses input_image.
type Image struct {
	// Role is the role of the message that held it: "user", or "tool" for
	// a tool result's image.
	Role      string `json:"role"`
	MediaType string `json:"mediaType"`
	Data      []byte `json:"data"`
	// Width and Height are read from the image's header; zero when the
	// bytes are not an image Go's decoders read.
	Width  int `json:"width"`
	Height int `json:"height"`
	// URL is an image given by address rather than by its bytes.
	URL string `json:"url,omitempty"`
}

// parseImages finds the images of a request body, in order.
func parseImages(api API, body []byte) []Image {
	var out []Image
	switch api {
	case APIAnthropic:
		gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
			m.Get("content").ForEach(func(_, b gjson.Result) bool {
				switch b.Get("type").String() {
				case "image":
					out = append(out, anthropicImage(m.Get("role").String(), b))
				case "tool_result":
					b.Get("content").ForEach(func(_, c gjson.Result) bool {
						if c.Get("type").String() == "image" {
							out = append(out, anthropicImage("tool", c))
						}
						return true
					})
				}
				return true
			})
			return true
		})
	case APIChat:
		gjson.GetBytes(body, "messages").ForEach(func(_, m gjson.Result) bool {
			m.Get("content").ForEach(func(_, c gjson.Result) bool {
				if c.Get("type").String() == "image_url" {
					out = append(out, urlImage(m.Get("role").String(), c.Get("image_url.url").String()))
				}
				return true
			})
			return true
		})
	case APIResponses:
		gjson.GetBytes(body, "input").ForEach(func(_, it gjson.Result) bool {
			role, list := it.Get("role").String(), it.Get("content")
			if it.Get("type").String() == "function_call_output" {
				role, list = "tool", it.Get("output")
			}
			list.ForEach(func(_, c gjson.Result) bool {
				if c.Get("type").String() == "input_image" {
					out = append(out, urlImage(role, c.Get("image_url").String()))
				}
				return true
			})
			return true
		})
	}
	return out
}

func anthropicImage(role string, b gjson.Result) Image {
	src := b.Get("source")
	if src.Get("type").String() == "url" {
		return Image{Role: role, URL: src.Get("url").String()}
	}
	data, _ := base64.StdEncoding.DecodeString(src.Get("data").String())
	return sized(Image{Role: role, MediaType: src.Get("media_type").String(), Data: data})
}

// urlImage reads a data: URL's image; another URL is kept as it is.
func urlImage(role, url string) Image {
	head, b64, ok := strings.Cut(strings.TrimPrefix(url, "data:"), ";base64,")
	if !ok || !strings.HasPrefix(url, "data:") {
		return Image{Role: role, URL: url}
	}
	data, _ := base64.StdEncoding.DecodeString(b64)
	return sized(Image{Role: role, MediaType: head, Data: data})
}

func sized(img Image) Image {
	if cfg, _, err := image.DecodeConfig(bytes.NewReader(img.Data)); err == nil {
		img.Width, img.Height = cfg.Width, cfg.Height
	}
	return img
}

// PNG is a w×h test picture, a smooth gradient (it compresses as a
// screenshot does), for tests that send images.
func PNG(w, h int) []byte {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetRGBA(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding an in-memory RGBA cannot fail
	}
	return buf.Bytes()
}
