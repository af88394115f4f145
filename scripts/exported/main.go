// Command exported counts, per package, the exported funcs, methods and types
// (test files excluded) and the product lines, so a package's surface can be
// compared before and after a change. Usage: go run ./scripts/exported [dir...]
package main

import (
	"bufio"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

type count struct{ funcs, methods, types, lines int }

func main() {
	roots := os.Args[1:]
	if len(roots) == 0 {
		roots = []string{"."}
	}
	pkgs := map[string]*count{}
	for _, root := range roots {
		filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if n := d.Name(); path != root && (strings.HasPrefix(n, ".") || n == "testdata") {
					return filepath.SkipDir
				}
				return nil
			}
			if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
				return nil
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return nil
			}
			if f.Name.Name == "main" {
				return nil
			}
			dir := filepath.Dir(path)
			c := pkgs[dir]
			if c == nil {
				c = &count{}
				pkgs[dir] = c
			}
			c.lines += lines(path)
			for _, decl := range f.Decls {
				switch d := decl.(type) {
				case *ast.FuncDecl:
					if !d.Name.IsExported() {
						continue
					}
					if d.Recv == nil {
						c.funcs++
					} else if recvExported(d.Recv.List[0].Type) {
						c.methods++
					}
				case *ast.GenDecl:
					for _, s := range d.Specs {
						if ts, ok := s.(*ast.TypeSpec); ok && ts.Name.IsExported() {
							c.types++
						}
					}
				}
			}
			return nil
		})
	}
	dirs := make([]string, 0, len(pkgs))
	for d := range pkgs {
		dirs = append(dirs, d)
	}
	sort.Strings(dirs)
	fmt.Printf("%-24s %6s %6s %6s %6s %7s\n", "package", "funcs", "meths", "types", "total", "lines")
	over := false
	for _, d := range dirs {
		c := pkgs[d]
		t := c.funcs + c.methods + c.types
		mark := ""
		if t > limitOf(d) {
			mark, over = fmt.Sprintf("  > %d", limitOf(d)), true
		}
		fmt.Printf("%-24s %6d %6d %6d %6d %7d%s\n", d, c.funcs, c.methods, c.types, t, c.lines, mark)
	}
	if over {
		os.Exit(1)
	}
}

func recvExported(e ast.Expr) bool {
	for {
		switch t := e.(type) {
		case *ast.StarExpr:
			e = t.X
		case *ast.IndexExpr:
			e = t.X
		case *ast.IndexListExpr:
			e = t.X
		case *ast.Ident:
			return t.IsExported()
		default:
			return false
		}
	}
}

func lines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 1<<20), 1<<20)
	for s.Scan() {
		n++
	}
	return n
}

// limitOf is how many exported names package d may have: 100, but state
// at 105 until the record's new field types (the rate window, the
// after-reset budget, the wake report and the pending agent switch, added
// together by three issues) move to a package of their own.
func limitOf(d string) int {
	if d == "state" {
		return 105
	}
	return 100
}
