package llm

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // registers GIF with image.Decode
	"image/jpeg"
	"image/png"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp" // registers WebP with image.Decode
)

// ImageLimit is the largest image a provider takes as it is.
type ImageLimit struct {
	// MaxEdge is the longest side, in pixels.
	MaxEdge int
	// MaxBytes is the largest encoded image, in bytes before base64.
	MaxBytes int
}

// The providers' limits. Anthropic refuses an image whose base64 exceeds
// 5 MB and scales down on its side anything with a long edge over 1568
// pixels (so bigger only costs upload time and, past 2000 pixels, fails
// requests with many images). OpenAI fits an image into 2048×2048 for high
// detail and takes up to 20 MB per image.
var (
	AnthropicImageLimit = ImageLimit{MaxEdge: 1568, MaxBytes: 5 << 20 * 3 / 4}
	OpenAIImageLimit    = ImageLimit{MaxEdge: 2048, MaxBytes: 20 << 20}
	// PromptImageLimit is what a prompt's image is fitted to when it is
	// stored: the strictest of the providers', so that every provider
	// takes it as it is on every later request.
	PromptImageLimit = ImageLimit{MaxEdge: 1568, MaxBytes: 5 << 20 * 3 / 4}
)

// The bounds of what darman decodes at all: bigger input is refused rather
// than risk the memory of a decompression bomb.
const (
	MaxImageInput  = 50 << 20
	MaxImagePixels = 64 << 20
)

// ErrImage is wrapped by every error about an image that cannot be used:
// not an image, of a type darman does not read, too big to handle.
var ErrImage = errors.New("unusable image")

// ImageInfo is what InspectImage finds.
type ImageInfo struct {
	// MediaType is the type the bytes are (not the one they claim).
	MediaType     string
	Width, Height int
}

var formatTypes = map[string]string{"png": "image/png", "jpeg": "image/jpeg", "gif": "image/gif", "webp": "image/webp"}

// InspectImage reads an image's type and size from its header, without
// decoding it.
func InspectImage(data []byte) (ImageInfo, error) {
	if len(data) == 0 {
		return ImageInfo{}, fmt.Errorf("%w: no bytes", ErrImage)
	}
	if len(data) > MaxImageInput {
		return ImageInfo{}, fmt.Errorf("%w: %d MiB; darman takes images up to %d MiB: make a smaller copy", ErrImage, len(data)>>20, MaxImageInput>>20)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return ImageInfo{}, fmt.Errorf("%w: not a PNG, JPEG, GIF or WebP image (%v)", ErrImage, err)
	}
	mt, ok := formatTypes[format]
	if !ok {
		return ImageInfo{}, fmt.Errorf("%w: a %s image; use PNG, JPEG, GIF or WebP", ErrImage, format)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return ImageInfo{}, fmt.Errorf("%w: an image of %d×%d pixels", ErrImage, cfg.Width, cfg.Height)
	}
	if cfg.Width*cfg.Height > MaxImagePixels {
		return ImageInfo{}, fmt.Errorf("%w: %d×%d pixels; darman handles up to %d megapixels: make a smaller copy", ErrImage, cfg.Width, cfg.Height, MaxImagePixels>>20)
	}
	return ImageInfo{MediaType: mt, Width: cfg.Width, Height: cfg.Height}, nil
}

// FitImage returns img as a provider with limit lim takes it: as it is
// when it is within the limit (its MediaType set to what the bytes are),
// else scaled down to lim.MaxEdge and encoded again, as PNG when that is
// small enough (screenshots stay sharp), else as JPEG. info is the
// result's type and size.
func FitImage(img Image, lim ImageLimit) (Image, ImageInfo, error) {
	info, err := InspectImage(img.Data)
	if err != nil {
		return Image{}, ImageInfo{}, err
	}
	img.MediaType = info.MediaType
	if max(info.Width, info.Height) <= lim.MaxEdge && len(img.Data) <= lim.MaxBytes {
		return img, info, nil
	}
	src, _, err := image.Decode(bytes.NewReader(img.Data))
	if err != nil {
		return Image{}, ImageInfo{}, fmt.Errorf("%w: a damaged %s image (%v)", ErrImage, info.MediaType, err)
	}
	lossless := info.MediaType == "image/png" || info.MediaType == "image/gif"
	edge := min(lim.MaxEdge, max(info.Width, info.Height))
	for range 8 {
		dst := scaled(src, edge)
		b := dst.Bounds()
		if lossless {
			if data, err := encodePNG(dst); err == nil && len(data) <= lim.MaxBytes {
				return Image{MediaType: "image/png", Data: data}, ImageInfo{MediaType: "image/png", Width: b.Dx(), Height: b.Dy()}, nil
			}
		}
		for _, q := range []int{85, 70} {
			var buf bytes.Buffer
			if err := jpeg.Encode(&buf, dst, &jpeg.Options{Quality: q}); err != nil {
				return Image{}, ImageInfo{}, fmt.Errorf("%w: encoding it as JPEG: %v", ErrImage, err)
			}
			if buf.Len() <= lim.MaxBytes {
				return Image{MediaType: "image/jpeg", Data: buf.Bytes()}, ImageInfo{MediaType: "image/jpeg", Width: b.Dx(), Height: b.Dy()}, nil
			}
		}
		edge = edge * 3 / 4
		if edge < 64 {
			break
		}
	}
	return Image{}, ImageInfo{}, fmt.Errorf("%w: it stays over %d MiB however small darman makes it", ErrImage, lim.MaxBytes>>20)
}

// scaled is src with its long edge at most edge pixels, on a white
// background (a transparent PNG made JPEG keeps its look).
func scaled(src image.Image, edge int) *image.RGBA {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if long := max(w, h); long > edge {
		w, h = max(1, w*edge/long), max(1, h*edge/long)
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(dst, dst.Bounds(), image.White, image.Point{}, draw.Src)
	draw.CatmullRom.Scale(dst, dst.Bounds(), src, b, draw.Over, nil)
	return dst
}

func encodePNG(img image.Image) ([]byte, error) {
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.DefaultCompression}
	err := enc.Encode(&buf, img)
	return buf.Bytes(), err
}

// fitImages returns req with every image fitted to lim (see FitImage):
// req itself when all of them are within it already, else a copy whose
// messages that held a changed image are new. The caller's request is
// never modified.
func fitImages(req *Request, lim ImageLimit) (*Request, error) {
	var msgs []Message
	for i, m := range req.Messages {
		var parts []Part
		for j, p := range m.Parts {
			np, changed, err := fitPart(p, lim)
			if err != nil {
				return nil, fmt.Errorf("message %d, part %d: %w", i, j, err)
			}
			if !changed {
				continue
			}
			if parts == nil {
				parts = append([]Part(nil), m.Parts...)
			}
			parts[j] = np
		}
		if parts == nil {
			continue
		}
		if msgs == nil {
			msgs = append([]Message(nil), req.Messages...)
		}
		msgs[i] = Message{Role: m.Role, Parts: parts}
	}
	if msgs == nil {
		return req, nil
	}
	out := *req
	out.Messages = msgs
	return &out, nil
}

func fitPart(p Part, lim ImageLimit) (Part, bool, error) {
	switch p := p.(type) {
	case Image:
		fit, err := fitOne(p, lim)
		return fit, err == nil && !sameImage(fit, p), err
	case ToolResult:
		var imgs []Image
		for k, img := range p.Images {
			fit, err := fitOne(img, lim)
			if err != nil {
				return nil, false, err
			}
			if sameImage(fit, img) {
				continue
			}
			if imgs == nil {
				imgs = append([]Image(nil), p.Images...)
			}
			imgs[k] = fit
		}
		if imgs == nil {
			return p, false, nil
		}
		p.Images = imgs
		return p, true, nil
	}
	return p, false, nil
}

func fitOne(img Image, lim ImageLimit) (Image, error) {
	fit, _, err := FitImage(img, lim)
	return fit, err
}

func sameImage(a, b Image) bool {
	return a.MediaType == b.MediaType && len(a.Data) == len(b.Data) && (len(a.Data) == 0 || &a.Data[0] == &b.Data[0])
}

// imageLimit is the limit of the API the client speaks.
func (c *Client) imageLimit() ImageLimit {
	if c.api == OriginAnthropic {
		return AnthropicImageLimit
	}
	return OpenAIImageLimit
}
