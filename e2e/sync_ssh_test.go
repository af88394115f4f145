//go:build unix

package e2e_test

import (
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"testing"
)

// startSSHD runs sshd on a random localhost port with its own config,
// host key and a throwaway client key; git reaches the repository as
// ssh://USER@127.0.0.1:PORT/ROOT/project.git.
func startSSHD(t *testing.T, root string) (string, []string) {
	sshd, err := exec.LookPath("sshd")
	if err != nil {
		if _, serr := os.Stat("/usr/sbin/sshd"); serr != nil {
			t.Skip("SKIP: sshd is not installed (Debian: apt-get install -y openssh-server)")
		}
		sshd = "/usr/sbin/sshd"
	}
	if _, err := exec.LookPath("ssh"); err != nil {
		t.Skip("SKIP: the ssh client is not installed")
	}
	u, err := user.Current()
	if err != nil {
		t.Skip("SKIP: no current user: ", err)
	}
	dir := filepath.Join(root, "ssh")
	os.MkdirAll(dir, 0o700)
	for _, k := range []string{"host_key", "client_key"} {
		if out, err := exec.Command("ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", filepath.Join(dir, k)).CombinedOutput(); err != nil {
			t.Skipf("SKIP: ssh-keygen: %v %s", err, out)
		}
	}
	pub, _ := os.ReadFile(filepath.Join(dir, "client_key.pub"))
	os.WriteFile(filepath.Join(dir, "authorized_keys"), pub, 0o600)
	port := freePort(t)
	// sshd runs every command through the user's login shell, which reads the
	// user's rc files (bash does for ssh commands; a pyenv rehash waiting on a
	// stale lock there made each git command wait 60 s). SetEnv keeps the
	// shell hermetic: bash skips ~/.bashrc below the top level (SHLVL), zsh
	// and fish look for their rc files in an empty directory.
	empty := filepath.Join(dir, "empty")
	os.MkdirAll(empty, 0o700)
	config := "SetEnv SHLVL=1 ZDOTDIR=" + empty + " XDG_CONFIG_HOME=" + empty + "\n" + "Port " + strconv.Itoa(port) + "\nListenAddress 127.0.0.1\nHostKey " + filepath.Join(dir, "host_key") +
		"\nAuthorizedKeysFile " + filepath.Join(dir, "authorized_keys") + "\nPidFile " + filepath.Join(dir, "sshd.pid") +
		"\nStrictModes no\nPasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\nPermitRootLogin prohibit-password\n"
	os.WriteFile(filepath.Join(dir, "sshd_config"), []byte(config), 0o600)
	if os.Geteuid() == 0 {
		os.MkdirAll("/run/sshd", 0o755) // sshd's privilege separation directory
	}
	cmd := exec.Command(sshd, "-D", "-e", "-f", filepath.Join(dir, "sshd_config"))
	if err := cmd.Start(); err != nil {
		t.Skip("SKIP: sshd cannot start: ", err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitListening(t, port, "sshd")
	ssh := "ssh -i " + filepath.Join(dir, "client_key") + " -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR"
	return "ssh://" + u.Username + "@127.0.0.1:" + strconv.Itoa(port) + root + "/project.git", []string{"GIT_SSH_COMMAND=" + ssh}
}
