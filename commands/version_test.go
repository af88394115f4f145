package commands

import (
	"bytes"
	"strings"
	"testing"
)

func TestRun_VersionAloneAnswersAsKongsVersionFlagDoes(t *testing.T) {
	var kongOut bytes.Buffer
	if code := Run([]string{"list", "--version"}, strings.NewReader(""), &kongOut, &kongOut); code != ExitOK {
		t.Fatalf("list --version: exit %d, output %q", code, kongOut.String())
	}
	var stdout, stderr bytes.Buffer
	if code := Run([]string{"--version"}, strings.NewReader(""), &stdout, &stderr); code != ExitOK || stdout.String() != kongOut.String() || stderr.Len() != 0 {
		t.Errorf("--version: exit %d, stdout %q, stderr %q; want exit 0 and %q", code, stdout.String(), stderr.String(), kongOut.String())
	}
	if !strings.HasPrefix(stdout.String(), "kandev ") {
		t.Errorf("--version printed %q, want kandev VERSION ...", stdout.String())
	}
	// Only the release build knows when it was built (its linker flags); a
	// test binary knows at most its commit's time, and must not call it "built".
	if strings.Contains(stdout.String(), "built") {
		t.Errorf("--version of a build without the release's linker flags says built: %q", stdout.String())
	}
}
