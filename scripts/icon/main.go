// Command icon draws the VS Code extension's marketplace icon,
// vscode-extension/media/icon.png (128x128): the activity-bar symbol
// (media/darman.svg, a speech bubble holding < >) filled, white on the
// extension's banner colour. Run from the repository's root:
//
//	go run ./scripts/icon
package main

import (
	"image"
	"image/color"
	"image/png"
	"log"
	"math"
	"os"
)

const size = 128

// banner is package.json's galleryBanner colour.
var banner = color.NRGBA{0x2f, 0x4a, 0xc4, 0xff}

// inRoundRect reports whether (x, y) is inside the rectangle [x0,x1]x[y0,y1]
// with corners of radius r.
func inRoundRect(x, y, x0, y0, x1, y1, r float64) bool {
	if x < x0 || x > x1 || y < y0 || y > y1 {
		return false
	}
	cx := math.Max(x0+r, math.Min(x, x1-r))
	cy := math.Max(y0+r, math.Min(y, y1-r))
	return math.Hypot(x-cx, y-cy) <= r
}

// inTriangle reports whether p is inside the triangle abc.
func inTriangle(px, py float64, t [6]float64) bool {
	side := func(ax, ay, bx, by float64) float64 { return (px-bx)*(ay-by) - (ax-bx)*(py-by) }
	d1 := side(t[0], t[1], t[2], t[3])
	d2 := side(t[2], t[3], t[4], t[5])
	d3 := side(t[4], t[5], t[0], t[1])
	neg := d1 < 0 || d2 < 0 || d3 < 0
	pos := d1 > 0 || d2 > 0 || d3 > 0
	return !(neg && pos)
}

// nearPolyline reports whether p is within w/2 of the polyline pts.
func nearPolyline(px, py float64, pts [][2]float64, w float64) bool {
	for i := 0; i+1 < len(pts); i++ {
		ax, ay, bx, by := pts[i][0], pts[i][1], pts[i+1][0], pts[i+1][1]
		dx, dy := bx-ax, by-ay
		t := math.Max(0, math.Min(1, ((px-ax)*dx+(py-ay)*dy)/(dx*dx+dy*dy)))
		if math.Hypot(px-(ax+t*dx), py-(ay+t*dy)) <= w/2 {
			return true
		}
	}
	return false
}

// shade is the colour at (x, y) and whether anything is drawn there.
func shade(x, y float64) (color.NRGBA, bool) {
	if !inRoundRect(x, y, 0, 0, size, size, 26) {
		return color.NRGBA{}, false
	}
	bubble := inRoundRect(x, y, 18, 20, 110, 88, 16) || inTriangle(x, y, [6]float64{34, 80, 34, 110, 64, 84})
	if !bubble {
		return banner, true
	}
	left := [][2]float64{{54, 40}, {40, 54}, {54, 68}}
	right := [][2]float64{{74, 40}, {88, 54}, {74, 68}}
	if nearPolyline(x, y, left, 9) || nearPolyline(x, y, right, 9) {
		return banner, true
	}
	return color.NRGBA{0xff, 0xff, 0xff, 0xff}, true
}

func main() {
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	const n = 4 // n*n samples a pixel: smooth edges
	for py := range size {
		for px := range size {
			var r, g, b, a float64
			for sy := range n {
				for sx := range n {
					c, ok := shade(float64(px)+(float64(sx)+0.5)/n, float64(py)+(float64(sy)+0.5)/n)
					if ok {
						r, g, b, a = r+float64(c.R), g+float64(c.G), b+float64(c.B), a+1
					}
				}
			}
			if a > 0 {
				img.SetNRGBA(px, py, color.NRGBA{uint8(r / a), uint8(g / a), uint8(b / a), uint8(255 * a / (n * n))})
			}
		}
	}
	f, err := os.Create("vscode-extension/media/icon.png")
	if err != nil {
		log.Fatal(err)
	}
	if err := png.Encode(f, img); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
}
