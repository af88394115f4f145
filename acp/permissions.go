package acp

import (
	"fmt"

	sdk "github.com/coder/acp-go-sdk"
)

// Permission modes (SPEC 6a).
const (
	PermAsk          = "ask"
	PermApproveReads = "approve-reads"
	PermApproveAll   = "approve-all"
	PermDenyAll      = "deny-all"
	// PermDefer approves reads and parks any other request until kandev
	// approve or kandev deny answers it (or the defer timeout denies it).
	PermDefer = "defer"
)

// ValidPermissionMode reports whether m is one of the four modes.
func ValidPermissionMode(m string) bool {
	return m == PermAsk || m == PermApproveReads || m == PermApproveAll || m == PermDenyAll || m == PermDefer
}

// permApproveAlways is the answer of kandev approve --always: the agent's
// "always" option when it offers one.
const permApproveAlways = "approve-always"

// Parks reports whether mode holds a request of kind for an answer from
// another process instead of deciding it now.
func Parks(mode string, kind sdk.ToolKind) bool { return mode == PermDefer && !readOnlyKinds[kind] }

// readOnlyKinds are the tool kinds approve-reads lets through.
var readOnlyKinds = map[sdk.ToolKind]bool{
	sdk.ToolKindRead: true, sdk.ToolKindSearch: true, sdk.ToolKindThink: true, sdk.ToolKindFetch: true,
}

// DecidePermission picks the answer to a permission request under mode
// (ask has already been resolved to allow or deny by the caller). It returns
// the chosen option id, or "" for a cancelled outcome when no option fits.
func DecidePermission(mode string, kind sdk.ToolKind, options []sdk.PermissionOption) (optionID string, allowed bool) {
	allow := mode == PermApproveAll || ((mode == PermApproveReads || mode == PermDefer) && readOnlyKinds[kind])
	pick := func(kinds ...sdk.PermissionOptionKind) string {
		for _, k := range kinds {
			for _, o := range options {
				if o.Kind == k {
					return string(o.OptionId)
				}
			}
		}
		return ""
	}
	if mode == permApproveAlways {
		if id := pick(sdk.PermissionOptionKindAllowAlways, sdk.PermissionOptionKindAllowOnce); id != "" {
			return id, true
		}
		return "", false
	}
	if allow {
		if id := pick(sdk.PermissionOptionKindAllowOnce, sdk.PermissionOptionKindAllowAlways); id != "" {
			return id, true
		}
		return "", false
	}
	return pick(sdk.PermissionOptionKindRejectOnce, sdk.PermissionOptionKindRejectAlways), false
}

// PermissionAnswer builds the ACP response for an option id ("" = cancelled).
func PermissionAnswer(optionID string) sdk.RequestPermissionResponse {
	if optionID == "" {
		return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}
	}
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Selected: &sdk.RequestPermissionOutcomeSelected{OptionId: sdk.PermissionOptionId(optionID)}}}
}

// ErrBadPermissionMode is a usage error.
func ErrBadPermissionMode(m string) error {
	return fmt.Errorf("unknown permission mode %q: use ask, approve-reads, approve-all, deny-all or defer", m)
}
