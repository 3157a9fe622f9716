package flame

import (
	"bufio"
	"fmt"
	"html"
	"io"
	"math"
	"time"

	"github.com/calltrail/calltrail/internal/indented"
	"github.com/calltrail/calltrail/query"
)

// Options change how a graph is drawn.
type Options struct {
	Title  string
	Icicle bool // root at the top
	Width  int  // pixels; 1200 if 0
}

const (
	rowHeight = 17
	// MaxLevels is how many levels a graph draws, as the web page does:
	// deeper chains are cut there.
	MaxLevels = 1500
)

// Colour gives a function a stable warm colour from its name: the web
// page's ct.colour, which it must match.
func Colour(name string) string {
	h := uint32(2166136261)
	for i := 0; i < len(name); i++ {
		h = (h ^ uint32(name[i])) * 16777619
	}
	hue, sat, light := 10+h%40, 65+(h>>8)%25, 55+(h>>16)%15
	return fmt.Sprintf("hsl(%d,%d%%,%d%%)", hue, sat, light)
}

// DiffColour colours a box by its change from the base, red for slower
// and blue for faster, deeper for larger changes, grey for no change: the
// web page's colours.
func DiffColour(value, base, all int64) string {
	delta := value - base
	if math.Abs(float64(delta)) < 0.01*float64(max(value, base)) {
		return "#c8c8c8"
	}
	s := min(1, math.Abs(float64(delta))/float64(max(base, value, all/100, 1)))
	hue := 0
	if delta < 0 {
		hue = 215
	}
	return fmt.Sprintf("hsl(%d,%d%%,%d%%)", hue, int(math.Round(40+50*s)), int(math.Round(80-30*s)))
}

// WriteSVG draws graph t as a static SVG, each box with a tooltip giving
// its function, time and share, at most MaxLevels levels deep.
func WriteSVG(w io.Writer, t *query.Tree, o Options) error {
	width := o.Width
	if width == 0 {
		width = 1200
	}
	diff := t.Base != nil
	// Depth and children, without recursion.
	n := t.Len()
	level := make([]int, n)
	kids := make([][]int32, n)
	rows := 1
	for i := 1; i < n; i++ {
		p := t.Parent[i]
		level[i] = level[p] + 1
		rows = max(rows, min(level[i]+1, MaxLevels))
		kids[p] = append(kids[p], int32(i))
	}
	height := (rows+2)*rowHeight + 10
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="system-ui, sans-serif" font-size="11">`+"\n", width, height, width, height)
	fmt.Fprintf(bw, `<rect width="100%%" height="100%%" fill="#f8f8f8"/><text x="%d" y="16" text-anchor="middle" font-size="14">%s</text>`+"\n", width/2, html.EscapeString(o.Title))
	// A box is as wide as its value, in the trace drawn, against the
	// base or not, as the web UI draws it: boxes as wide as the larger
	// of the two would outgrow their parents. Colours compare with the
	// larger of the two traces, as the web UI's.
	total := max(t.Value[0], 1)
	all := total
	if diff {
		all = max(all, t.Base[0])
	}
	scale := float64(width-20) / float64(total)
	x := make([]float64, n)
	x[0] = 10
	for i := int32(0); i < int32(n); i++ { // parents come before children
		wpx := float64(t.Value[i]) * scale
		if wpx < 0.5 || level[i] >= MaxLevels {
			continue
		}
		cx := x[i]
		for _, c := range kids[i] {
			x[c] = cx
			cx += float64(t.Value[c]) * scale
		}
		y := height - (level[i]+1)*rowHeight - 5
		if o.Icicle {
			y = 25 + level[i]*rowHeight
		}
		name := "all"
		fill := "#d9d9d9"
		if i > 0 {
			name = t.Names[t.Name[i]]
			fill = Colour(name)
			if diff {
				fill = DiffColour(t.Value[i], t.Base[i], all)
			}
		}
		tip := fmt.Sprintf("%s: %s (%.2f%%)", name, indented.Round(time.Duration(t.Value[i])), 100*float64(t.Value[i])/float64(total))
		if diff {
			sign := "+"
			if t.Value[i] < t.Base[i] {
				sign = "-"
			}
			tip += fmt.Sprintf(", base %s (%s%s)", indented.Round(time.Duration(t.Base[i])), sign, indented.Round(time.Duration(max(t.Value[i]-t.Base[i], t.Base[i]-t.Value[i]))))
		}
		fmt.Fprintf(bw, `<g><title>%s</title><rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" rx="2"/>`, html.EscapeString(tip), x[i], y, wpx, rowHeight-1, fill)
		if chars := int(wpx / 7); chars >= 3 {
			if len(name) > chars {
				name = name[:chars-2] + ".."
			}
			fmt.Fprintf(bw, `<text x="%.1f" y="%d">%s</text>`, x[i]+3, y+12, html.EscapeString(name))
		}
		bw.WriteString("</g>\n")
	}
	bw.WriteString("</svg>\n")
	return bw.Flush()
}
