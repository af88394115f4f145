package acp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestReadTextFile_RefusesAnAnswerTooLongForTheAgentToRead(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "small.txt"), []byte("hello\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "big.txt"), []byte(strings.Repeat("a\n", maxReadAnswer/2+1)), 0o644)
	// Within the bound in bytes, over it once encoded: quotes become \".
	os.WriteFile(filepath.Join(dir, "quoted.txt"), []byte(strings.Repeat(`"`, maxReadAnswer*2/3)), 0o644)
	cl := &client{c: &Conn{opts: ConnOptions{Cwd: dir}}}
	cases := []struct {
		path string
		ok   bool
	}{
		{"small.txt", true},
		{"big.txt", false},
		{"quoted.txt", false},
	}
	for _, tc := range cases {
		_, err := cl.ReadTextFile(context.Background(), sdk.ReadTextFileRequest{Path: tc.path})
		if (err == nil) != tc.ok {
			t.Errorf("%s: err %v, want ok %v", tc.path, err, tc.ok)
		}
		if err != nil && !strings.Contains(DescribeError(err)+errData(err), "too large") {
			t.Errorf("%s: unclear error %v", tc.path, err)
		}
	}
}

func errData(err error) string {
	var re *sdk.RequestError
	if errors.As(err, &re) {
		if m, ok := re.Data.(map[string]any); ok {
			s, _ := m["error"].(string)
			return s
		}
	}
	return ""
}
