//go:build unix

package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// cmdSupervise times what kandev's agent supervisor adds to a launch: the
// agent program started directly, and started by kandev re-executed as its
// supervisor (environment KANDEV_AGENT_SUPERVISOR, the owner's watch pipe
// on fd 3, its own process group), as the owner launches every agent. The
// two alternate, so both see the same machine.
func cmdSupervise(args []string) error {
	fs := flag.NewFlagSet("supervise", flag.ExitOnError)
	out := fs.String("out", "", "results directory")
	name := fs.String("name", "supervise", "measurement name prefix")
	runs := fs.Int("runs", 5, "timed runs of each (after one warm-up)")
	kandev := fs.String("kandev", "", "the kandev binary")
	flags, agent := splitDashDash(args)
	fs.Parse(flags)
	if *out == "" || *kandev == "" || len(agent) == 0 {
		return errors.New("supervise: -out, -kandev and an agent command after -- are required")
	}
	direct := &Measurement{Name: *name + "_direct", Command: fmt.Sprint(agent)}
	super := &Measurement{Name: *name + "_supervised", Command: *kandev + " (supervisor) " + fmt.Sprint(agent)}
	fmt.Fprintf(os.Stderr, "  measuring %-28s %v directly and through %s's supervisor\n", *name, agent, *kandev)
	for i := 0; i < *runs+1; i++ {
		d, err := launchDirect(agent)
		if err != nil {
			direct.Error = err.Error()
			break
		}
		s, err := launchSupervised(*kandev, agent)
		if err != nil {
			super.Error = err.Error()
			break
		}
		if i > 0 {
			direct.RunsMS = append(direct.RunsMS, d.Seconds()*1000)
			super.RunsMS = append(super.RunsMS, s.Seconds()*1000)
		}
	}
	direct.finish()
	super.finish()
	if err := save(*out, direct); err != nil {
		return err
	}
	return save(*out, super)
}

func launchDirect(agent []string) (time.Duration, error) {
	cmd := exec.Command(agent[0], agent[1:]...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	err := cmd.Run()
	return time.Since(start), err
}

func launchSupervised(kandev string, agent []string) (time.Duration, error) {
	watchR, watchW, err := os.Pipe()
	if err != nil {
		return 0, err
	}
	defer watchW.Close() // the owner stays for the whole run
	cmd := exec.Command(kandev, agent...)
	cmd.Env = append(os.Environ(), "KANDEV_AGENT_SUPERVISOR=1")
	cmd.ExtraFiles = []*os.File{watchR}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	start := time.Now()
	err = cmd.Start()
	watchR.Close()
	if err == nil {
		err = cmd.Wait()
	}
	return time.Since(start), err
}
