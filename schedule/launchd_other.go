//go:build !darwin

package schedule

import "errors"

var errNoLaunchd = errors.New("launchd exists only on macOS")

func submitLaunchd(Job) (string, error) { return "", errNoLaunchd }
func cancelLaunchd(string) error        { return errNoLaunchd }
func findLaunchd(string) (string, bool) { return "", false }
