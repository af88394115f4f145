package surgery

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	sdk "github.com/coder/acp-go-sdk"
	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/acp"
	"github.com/kandev/kandev/acp/owner"
	"github.com/kandev/kandev/config"
	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/internal/safefile"
	"github.com/kandev/kandev/state"
)

// Fork methods: how a fork's agent session is made.
const (
	ForkNative = "native" // ACP session/fork of the parent's agent session
	ForkReplay = "replay" // a fresh agent session; the first prompt carries the resume context
)

// ForkFacts are what the choice of a fork's method depends on.
type ForkFacts struct {
	Advertised  bool   // the agent advertised session/fork (stored capabilities)
	ParentToken string // the parent's agent session, "" when it has none
	ParentTurn  string // the parent's running turn, "" when none
	ParentLive  bool   // a kandev process runs the parent's agent now
	AtEnd       bool   // the fork is at the end of the parent's conversation
	NativeAllow bool   // the profile allows native session handling
}

// ChooseForkMethod is native only when the agent can fork the very
// conversation the child gets: it advertised session/fork, the parent has an
// agent session that no process has open (no turn under way, no live
// owner), and the fork is at the end. Anything earlier is a history the agent's own session never had
// alone, so it is replayed.
func ChooseForkMethod(f ForkFacts) string {
	if f.Advertised && f.NativeAllow && f.ParentToken != "" && f.ParentTurn == "" && !f.ParentLive && f.AtEnd {
		return ForkNative
	}
	return ForkReplay
}

// ForkAdvertised reads session/fork from a stored initialize response.
func ForkAdvertised(caps json.RawMessage) bool {
	return len(caps) > 0 && gjson.GetBytes(caps, "agentCapabilities.sessionCapabilities.fork").Exists()
}

// ForkSpec is a fork to make. Place, when set, gives the child its own
// place to work (a new worktree) once its id is known; otherwise it works
// in the parent's directory.
type ForkSpec struct {
	Parent string
	At     int64 // -1: the end of the parent's conversation
	Title  string
	Now    time.Time
	Place  func(child *state.Session) error
}

// Fork creates a session whose log starts with a copy of the parent's
// conversation (its current epoch) up to seq At, renumbered, and a marker
// naming the parent; the parent is not touched. The child's log is written
// whole before its record exists, so a crash leaves no half-made session
// (at most a log file with no record, which prune removes). Its agent
// session is made later by its first owner (replay), or here by
// session/fork (native, see ChooseForkMethod and NativeFork).
func Fork(h *state.Home, spec ForkSpec) (*state.Session, bool, error) {
	parent, err := h.LoadSession(spec.Parent)
	if err != nil {
		return nil, false, err
	}
	epoch, err := currentEpoch(h, parent.ID)
	if err != nil {
		return nil, false, err
	}
	bounds := history.Boundaries(epoch)
	end := bounds[len(bounds)-1]
	at := spec.At
	if at < 0 {
		at = end
	}
	if err := checkCut(parent.ID, epoch, at); err != nil {
		return nil, false, err
	}
	child := &state.Session{
		ID: state.NewID(spec.Now), ParentID: parent.ID, ForkedAt: at, Agent: parent.Agent,
		Cwd: parent.Cwd, Workspace: parent.Workspace, Worktree: parent.Worktree,
		State: state.StateWaitingForInput, CreatedAt: spec.Now, LastActivityAt: spec.Now,
		Title: history.Redact(spec.Title), Capabilities: parent.Capabilities,
	}
	child.TaskID = child.ID
	child.TitleNamed = child.Title != ""
	if child.Title == "" {
		child.Title = history.Clip("fork of "+parent.Title, 80)
	}
	copied := history.ForkHistory(epoch, at)
	child.Turns = lastTurnNumber(copied)
	child.PendingContext = history.HasConversation(copied)
	if spec.Place != nil {
		if err := spec.Place(child); err != nil {
			return nil, false, err
		}
	}
	// The child's owner lock, held from its log to its record, tells prune
	// that a log with no record is a fork under way, not a killed one's.
	held, err := h.Hold(child.ID, history.LogOptions)
	if err != nil {
		return nil, false, err
	}
	defer held.Release()
	if err := writeForkLog(h, child, copied, fmt.Sprintf("Forked from session %s at seq %d: the conversation up to there was copied; the parent is unchanged.", parent.ID, at)); err != nil {
		return nil, false, err
	}
	if err := h.CreateSession(child); err != nil {
		return nil, false, err
	}
	return child, at == end, nil
}

// writeForkLog writes the child's log in one atomic write: the copied
// events with the child's seq and id, then the fork marker.
func writeForkLog(h *state.Home, child *state.Session, copied []eventlog.Event, summary string) error {
	var b strings.Builder
	m := history.NewMarker(history.MarkerSessionForked, summary, "")
	m.Timestamp = eventlog.FormatTime(child.CreatedAt)
	for i, e := range append(copied, m) {
		e.Seq, e.SessionID, e.Raw = int64(i+1), child.ID, nil
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("fork: encode event: %w", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	return safefile.WriteFileAtomic(h.LogPath(child.ID), []byte(b.String()))
}

// lastTurnNumber is the highest n of the turn ids "tn" in evs, so the
// child's next turn id is new.
func lastTurnNumber(evs []eventlog.Event) int {
	n := 0
	for _, e := range evs {
		if k, err := strconv.Atoi(strings.TrimPrefix(e.TurnID, "t")); err == nil && k > n {
			n = k
		}
	}
	return n
}

// NativeFork asks the agent to fork the parent's agent session for child
// (session/fork), and records the new agent session on the child, which
// its first owner then restores like any other. It launches the agent in
// the child's directory for that one request. An error leaves the child on
// the replay path (the caller reports why).
func NativeFork(ctx context.Context, h *state.Home, cfg *config.Config, p acp.Profile, parent, child *state.Session) error {
	proc, err := acp.Launch(acp.LaunchSpec{Command: p.ResolvedCommand(), Env: p.Env, Dir: child.Cwd, Home: h.Dir, Hint: p.InstallHint, SessionID: child.ID})
	if err != nil {
		return err
	}
	defer proc.Stop(500 * time.Millisecond)
	conn := acp.Connect(proc, acp.ConnOptions{Cwd: child.Cwd, OnEvents: func([]*eventlog.Event) {}, Permission: denyAll})
	hctx, cancel := context.WithTimeout(ctx, time.Duration(cfg.HandshakeTimeoutSeconds())*time.Second)
	defer cancel()
	init, err := conn.Initialize(hctx)
	if err != nil {
		return fmt.Errorf("initialize: %s", acp.DescribeError(err))
	}
	if init.AgentCapabilities.SessionCapabilities.Fork == nil {
		return fmt.Errorf("agent %s no longer advertises session/fork", p.Name)
	}
	token, err := conn.Fork(hctx, parent.ResumeToken)
	if err != nil {
		return fmt.Errorf("session/fork: %s", acp.DescribeError(err))
	}
	caps, _ := json.Marshal(init)
	_, err = h.UpdateSession(child.ID, func(s *state.Session) error {
		s.ResumeToken = token
		s.AgentLaunched = true
		s.AgentCommand = p.Command
		s.Capabilities = caps
		s.PendingContext = false
		return nil
	})
	return err
}

// denyAll answers any permission request during a fork: none is expected.
func denyAll(context.Context, sdk.RequestPermissionRequest) sdk.RequestPermissionResponse {
	return owner.PermissionAnswer("")
}
