package e2e_test

import (
	"encoding/json"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// TestAgents_EveryInstallHintNamesAPackageTheRegistryHas asks the npm
// registry for each package that `kandev agents` tells users to install:
// a hint that names a package the registry does not have (amp-acp did) is a
// dead end for the person who follows it.
func TestAgents_EveryInstallHintNamesAPackageTheRegistryHas(t *testing.T) {
	t.Parallel()
	requireNPMOptIn(t, "the registry check of install hints")
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("SKIP: npm is not installed")
	}
	w := newWorld(t)
	out := w.mustRun("agents", "--json")
	var got struct {
		Agents []struct {
			Name        string `json:"name"`
			InstallHint string `json:"install_hint"`
		} `json:"agents"`
	}
	if err := json.Unmarshal([]byte(out.stdout), &got); err != nil {
		t.Fatalf("agents --json: %v\n%s", err, out.stdout)
	}
	install := regexp.MustCompile(`npm install -g (\S+)`)
	checked := 0
	for _, a := range got.Agents {
		for _, m := range install.FindAllStringSubmatch(a.InstallHint, -1) {
			pkg := m[1]
			v, err := exec.Command("npm", "view", pkg, "version").Output()
			if err != nil || strings.TrimSpace(string(v)) == "" {
				t.Errorf("%s: its install hint names %s, which the npm registry does not have (%v)", a.Name, pkg, err)
				continue
			}
			t.Logf("%s: %s %s", a.Name, pkg, strings.TrimSpace(string(v)))
			checked++
		}
	}
	if checked < 6 {
		t.Fatalf("only %d install hints name an npm package; want claude, codex, copilot, gemini, opencode and auggie", checked)
	}
}
