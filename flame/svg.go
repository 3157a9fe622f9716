package flame

import (
	"bufio"
	"fmt"
	"hash/fnv"
	"html"
	"io"
	"time"

	"github.com/calltrail/calltrail/internal/seedview"
)

// Options change how a graph is drawn.
type Options struct {
	Title   string
	Icicle  bool // root at the top
	Width   int  // pixels; 1200 if 0
	Diff    bool // colour by change from Base
	Inverse bool // the graph is inverted (self time)
}

const rowHeight = 17

func depth(f *Frame) int {
	d := 0
	for _, c := range f.Children {
		d = max(d, depth(c))
	}
	return d + 1
}

// colour gives a warm colour from the name, or in a diff red for slower
// and blue for faster, deeper for larger changes.
func colour(f *Frame, diff bool) string {
	if diff {
		if f.Value == f.Base {
			return "rgb(220,220,220)"
		}
		ref := max(f.Base, f.Value, 1)
		change := float64(f.Value-f.Base) / float64(ref) // -1..1
		level := int(220 - 160*min(1, max(change, -change)))
		if change > 0 {
			return fmt.Sprintf("rgb(255,%d,%d)", level, level)
		}
		return fmt.Sprintf("rgb(%d,%d,255)", level, level)
	}
	h := fnv.New32a()
	h.Write([]byte(f.Name))
	v := h.Sum32()
	return fmt.Sprintf("rgb(%d,%d,%d)", 205+v%50, 80+(v>>8)%130, 40+(v>>16)%40)
}

// WriteSVG draws root as a static SVG, each box with a tooltip giving its
// function, time and share.
func WriteSVG(w io.Writer, root *Frame, o Options) error {
	width := o.Width
	if width == 0 {
		width = 1200
	}
	rows := depth(root)
	height := (rows+2)*rowHeight + 10
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Verdana, sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="#f8f8f8"/><text x="%d" y="16" text-anchor="middle" font-size="14">%s</text>`+"\n", width/2, html.EscapeString(o.Title))
	total := max(root.Value, root.Base, 1)
	scale := float64(width-20) / float64(total)
	var draw func(f *Frame, x float64, level int)
	draw = func(f *Frame, x float64, level int) {
		v := max(f.Value, f.Base)
		wpx := float64(v) * scale
		if wpx < 0.5 {
			return
		}
		y := height - (level+1)*rowHeight - 5
		if o.Icicle {
			y = 25 + level*rowHeight
		}
		tip := fmt.Sprintf("%s: %s (%.2f%%)", f.Name, seedview.Round(time.Duration(f.Value)), 100*float64(f.Value)/float64(total))
		if o.Diff {
			tip += fmt.Sprintf(", base %s", seedview.Round(time.Duration(f.Base)))
		}
		fmt.Fprintf(bw, `<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" rx="2"/>`, html.EscapeString(tip), x, y, wpx, rowHeight-1, colour(f, o.Diff))
		if chars := int(wpx / 7); chars >= 3 {
			name := f.Name
			if len(name) > chars {
				name = name[:chars-2] + ".."
			}
			fmt.Fprintf(bw, `<text x="%.1f" y="%d">%s</text>`, x+3, y+12, html.EscapeString(name))
		}
		bw.WriteString("</g>\n")
		cx := x
		for _, c := range f.Children {
			draw(c, cx, level+1)
			cx += float64(max(c.Value, c.Base)) * scale
		}
	}
	draw(root, 10, 0)
	bw.WriteString("</svg>\n")
	return bw.Flush()
}
