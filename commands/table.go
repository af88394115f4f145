package commands

import (
	"io"
	"unicode/utf8"
)

// table is rows of cells printed in columns two spaces apart, the last
// column unpadded (text/tabwriter's layout with padding 2), written in one
// pass without buffering each cell: list prints thousands of rows.
type table struct {
	rows [][]string
}

// add appends a row; every row has the header's number of cells.
func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the table to w.
func (t *table) write(w io.Writer) {
	var widths []int
	for _, r := range t.rows {
		for i, c := range r[:max(len(r)-1, 0)] {
			if i == len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	const pad = "                                                                "
	var line []byte
	for _, r := range t.rows {
		line = line[:0]
		for i, c := range r {
			line = append(line, c...)
			if i < len(r)-1 {
				for n := widths[i] + 2 - utf8.RuneCountInString(c); n > 0; n -= len(pad) {
					line = append(line, pad[:min(n, len(pad))]...)
				}
			}
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return
		}
	}
}
