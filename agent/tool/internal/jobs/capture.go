package jobs

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"unicode/utf8"
)

// The cap on a command's output as the model sees it: the head and the
// tail are kept, since errors and summaries come last.
const (
	OutputMax  = 32 << 10
	OutputHead = 8 << 10
	// saveMax bounds the file the full output is saved to.
	saveMax = 64 << 20
)

// Capture collects a command's output as it streams: all of it while it
// fits the cap, then its head and its tail, with everything written to a
// file so the model can read what was cut. It is an io.Writer safe for
// concurrent use.
type Capture struct {
	mu    sync.Mutex
	head  []byte
	tail  []byte // the last bytes after head; may hold up to twice OutputMax before trimming
	total int64
	// save makes the file for the full output; nil keeps none.
	save     func() (*os.File, error)
	file     *os.File
	saved    int64
	saveErr  error
	finished bool
	progress func(string)
}

// NewCapture returns a capture that saves the full output to the file
// save makes (nil: none) and passes each new piece of output to progress
// (nil: nobody).
func NewCapture(save func() (*os.File, error), progress func(string)) *Capture {
	return &Capture{save: save, progress: progress}
}

func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.total+int64(len(p)) > OutputMax && c.file == nil && !c.finished && c.save != nil && c.saveErr == nil {
		// Nothing is dropped before this point, so head and tail are
		// everything so far.
		c.file, c.saveErr = c.save()
		if c.file != nil {
			c.toFile(c.head)
			c.toFile(c.tail)
		}
	}
	if c.file != nil {
		c.toFile(p)
	}
	c.total += int64(len(p))
	rest := p
	if room := OutputHead - len(c.head); room > 0 {
		n := min(room, len(rest))
		c.head = append(c.head, rest[:n]...)
		rest = rest[n:]
	}
	c.tail = append(c.tail, rest...)
	if keep := OutputMax - OutputHead; len(c.tail) > 2*keep {
		c.tail = append(c.tail[:0], c.tail[len(c.tail)-keep:]...)
	}
	progress := c.progress
	var text string
	if progress != nil {
		text = c.textLocked()
	}
	c.mu.Unlock()
	if progress != nil {
		progress(text)
	}
	return len(p), nil
}

func (c *Capture) toFile(p []byte) {
	if c.saved+int64(len(p)) > saveMax {
		p = p[:max(0, saveMax-c.saved)]
	}
	n, err := c.file.Write(p)
	c.saved += int64(n)
	if err != nil && c.saveErr == nil {
		c.saveErr = err
	}
}

// Text is the output as the model sees it.
func (c *Capture) Text() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.textLocked()
}

func (c *Capture) textLocked() string {
	if c.total <= OutputMax {
		return string(c.head) + string(c.tail)
	}
	keep := OutputMax - OutputHead
	tail := c.tail
	if len(tail) > keep {
		tail = tail[len(tail)-keep:]
	}
	head := trimHead(c.head)
	t := trimTail(tail)
	omitted := c.total - int64(len(head)) - int64(len(t))
	return string(head) + fmt.Sprintf("\n[… %d bytes omitted …]\n", omitted) + string(t)
}

// trimHead ends a kept head at a line end near its end, or at least not
// inside a UTF-8 sequence.
func trimHead(b []byte) []byte {
	if i := bytes.LastIndexByte(b, '\n'); i >= len(b)*3/4 {
		return b[:i+1]
	}
	n := len(b)
	for i := n - 1; i >= 0 && i >= n-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				n = i
			}
			break
		}
	}
	return b[:n]
}

// trimTail starts a kept tail at a line start near its beginning, or at
// least at the start of a character.
func trimTail(b []byte) []byte {
	if i := bytes.IndexByte(b, '\n'); i >= 0 && i < len(b)/8 {
		return b[i+1:]
	}
	i := 0
	for i < len(b) && i < utf8.UTFMax && !utf8.RuneStart(b[i]) {
		i++
	}
	return b[i:]
}

// Truncated reports whether text cut anything.
func (c *Capture) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > OutputMax
}

// Finish closes the saved file and returns its path, or "" when nothing was
// saved; err says why saving failed.
func (c *Capture) Finish() (path string, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.finished = true
	if c.file == nil {
		return "", c.saveErr
	}
	path = c.file.Name()
	if cerr := c.file.Close(); c.saveErr == nil {
		c.saveErr = cerr
	}
	c.file = nil
	return path, c.saveErr
}
