package acp

import (
	"encoding/json"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// RestoreMethod is how an agent's conversation was brought back (see docs/resume.md).
type RestoreMethod string

// Restore methods recorded in agent_started.restore.
const (
	RestoreNone   RestoreMethod = ""
	RestoreResume RestoreMethod = "resume"
	RestoreLoad   RestoreMethod = "load"
	RestoreNew    RestoreMethod = "new"
	RestoreFlag   RestoreMethod = "flag"
	// RestoreReattach: the agent never stopped, so nothing was restored:
	// kandev connected again to an agent a container's relay kept (in the
	// log), or kandev resume found a live owner already running it.
	RestoreReattach RestoreMethod = "reattach"
	// RestoreFail means: stop, keep the token, exit 6 so the user can retry.
	RestoreFail RestoreMethod = "fail"
)

// Capabilities is what the restore ladder reads of an initialize response.
type Capabilities struct {
	Resume bool
	Load   bool
	List   bool   // session/list, to tell a gone session from a failing agent
	Agent  string // "name version" from agentInfo, "" when the agent gave none
}

// CapabilitiesOf extracts the restore-relevant capabilities.
func CapabilitiesOf(r sdk.InitializeResponse) Capabilities {
	c := Capabilities{
		Resume: r.AgentCapabilities.SessionCapabilities.Resume != nil,
		Load:   r.AgentCapabilities.LoadSession,
		List:   r.AgentCapabilities.SessionCapabilities.List != nil,
	}
	if r.AgentInfo != nil {
		c.Agent = strings.TrimSpace(r.AgentInfo.Name + " " + r.AgentInfo.Version)
	}
	return c
}

// CapabilitiesFromJSON reads them back from a stored initialize response.
func CapabilitiesFromJSON(b json.RawMessage) Capabilities {
	var r sdk.InitializeResponse
	if len(b) == 0 || json.Unmarshal(b, &r) != nil {
		return Capabilities{}
	}
	return CapabilitiesOf(r)
}

// LadderInput is everything the next restore step depends on.
type LadderInput struct {
	Caps         Capabilities
	HasToken     bool
	NativeResume bool          // the profile allows session/resume and session/load
	Prev         RestoreMethod // the step that just failed; RestoreNone at the start
	PrevErr      ErrorClass
}

// NextRestoreStep is the restore ladder (docs/resume.md) as one pure decision:
// resume when advertised and a token is stored; load when resume is missing
// or answered method-not-found and load is advertised; a fresh session only
// after method-not-found or unknown-session; anything else fails and keeps
// the token.
func NextRestoreStep(in LadderInput) RestoreMethod {
	native := in.NativeResume && in.HasToken
	switch in.Prev {
	case RestoreNone:
		switch {
		case native && in.Caps.Resume:
			return RestoreResume
		case native && in.Caps.Load:
			return RestoreLoad
		default:
			return RestoreNew
		}
	case RestoreResume:
		switch in.PrevErr {
		case ClassMethodNotFound:
			if in.Caps.Load {
				return RestoreLoad
			}
			return RestoreNew
		case ClassUnknownSession:
			return RestoreNew
		}
		return RestoreFail
	case RestoreLoad:
		if in.PrevErr == ClassMethodNotFound || in.PrevErr == ClassUnknownSession {
			return RestoreNew
		}
		return RestoreFail
	}
	return RestoreFail
}

// ClassifyWithList settles an inconclusive restore error (ClassOther) with the
// agent's own session list: some agents answer a session they do not have
// with a generic internal error (OpenCode 1.18: -32603 "OpenCode service
// failure"), which would otherwise keep the token and fail the same way on
// every retry. Only when the agent advertises session/list and its list, read
// without error, does not name the session is it unknown; anything else keeps
// the class it had.
func ClassifyWithList(class ErrorClass, caps Capabilities, listed func() (bool, error)) ErrorClass {
	if class != ClassOther || !caps.List {
		return class
	}
	if ok, err := listed(); err == nil && !ok {
		return ClassUnknownSession
	}
	return class
}
