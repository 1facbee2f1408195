package tool

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

const utf8BOM = "\ufeff"

// textForm is how a text file is written apart from its text: a leading
// byte-order mark, and CRLF line ends. Edits work on the text with both
// taken away and put them back on save, so a Windows file stays one.
type textForm struct {
	bom  bool
	crlf bool
}

// decodeText splits a file's content into its text (no BOM, LF line ends)
// and its form. Only a file whose every line end is CRLF counts as CRLF; a
// mixed file is left as it is, so lines an edit does not touch keep their
// ends.
func decodeText(b []byte) (string, textForm) {
	s := string(b)
	var f textForm
	if rest, ok := strings.CutPrefix(s, utf8BOM); ok {
		s, f.bom = rest, true
	}
	if n := strings.Count(s, "\r\n"); n > 0 && n == strings.Count(s, "\n") {
		s, f.crlf = strings.ReplaceAll(s, "\r\n", "\n"), true
	}
	return s, f
}

// encode puts the form back on text.
func (f textForm) encode(s string) []byte {
	if f.crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	if f.bom {
		s = utf8BOM + s
	}
	return []byte(s)
}

// normalize brings text the model wrote into the form decodeText gives a
// CRLF file.
func (f textForm) normalize(s string) string {
	if f.crlf {
		return strings.ReplaceAll(s, "\r\n", "\n")
	}
	return s
}

// binaryExts are extensions of files that are binary whatever they start
// with.
var binaryExts = map[string]bool{
	".zip": true, ".gz": true, ".tgz": true, ".bz2": true, ".xz": true, ".zst": true, ".7z": true, ".rar": true,
	".jar": true, ".war": true, ".class": true, ".exe": true, ".dll": true, ".so": true, ".dylib": true,
	".o": true, ".a": true, ".lib": true, ".obj": true, ".wasm": true, ".pyc": true, ".pyo": true,
	".pdf": true, ".doc": true, ".docx": true, ".xls": true, ".xlsx": true, ".ppt": true, ".pptx": true,
	".odt": true, ".ods": true, ".ico": true, ".bmp": true, ".tif": true, ".tiff": true,
	".mp3": true, ".mp4": true, ".mov": true, ".avi": true, ".mkv": true, ".wav": true, ".flac": true, ".ogg": true,
	".ttf": true, ".otf": true, ".woff": true, ".woff2": true, ".eot": true, ".sqlite": true, ".db": true,
}

// isBinary guesses whether a file is binary: by its extension, then by its
// first 8 KiB (a NUL byte, many control bytes, or mostly invalid UTF-8).
func isBinary(path string, b []byte) bool {
	if binaryExts[strings.ToLower(filepath.Ext(path))] {
		return true
	}
	sample := b[:min(len(b), 8192)]
	if len(sample) == 0 {
		return false
	}
	if bytes.IndexByte(sample, 0) >= 0 {
		return true
	}
	control, invalid := 0, 0
	for i := 0; i < len(sample); {
		c := sample[i]
		if c < utf8.RuneSelf {
			if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != '\b' && c != 0x1b {
				control++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(sample[i:])
		if r == utf8.RuneError && size == 1 && len(sample)-i >= utf8.UTFMax {
			invalid++
		}
		i += size
	}
	return control*10 > len(sample) || invalid*3 > len(sample)
}

// imageMIME returns the type of an image the model can be shown (PNG,
// JPEG, GIF, WebP), judged by content, or "".
func imageMIME(b []byte) string {
	switch t := http.DetectContentType(b); t {
	case "image/png", "image/jpeg", "image/gif", "image/webp":
		return t
	}
	return ""
}

// imageExts are the extensions read treats as images.
var imageExts = map[string]bool{".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".webp": true}
