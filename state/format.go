package state

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kandev/kandev/internal/safefile"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
	jsonv1 "github.com/go-json-experiment/json/v1"
)

// Format is the version of the files this kandev writes: the home's format
// file and the format field of every session record. An event log has the
// format of its record. A record without the field was written before formats
// were numbered: format 0. Older records are read as this format and
// upgraded when next written (upgradeRecord); logs are never rewritten.
//
//	0: records without a format field
//	1: the format field; unknown record fields and event types are kept
//	2: a pause is data ({kind, reason, turn}) with the owed turn in
//	   interrupted_turn, replacing format 1's "paused" reason string
//	3: conversation surgery: rewind events fence the log into epochs
//	   (records: epoch, rewind_pending, forked_at, worktree.owned). A
//	   format 2 kandev would read a rewound or cleared log whole and hand
//	   the agent what was taken back, or prune nothing it made: not harmless,
//	   so it must refuse these files rather than ignore the new fields
//	4: the agent's setup (records: setup, mcp_config, turn_setup; events:
//	   setup_changed). A format 3 kandev would restore the agent without its
//	   MCP servers, model and mode and say nothing: it must refuse instead
const Format = 4

// ErrNewerFormat marks a home or a session written by a newer kandev: this
// one refuses it rather than half-read or rewrite it.
var ErrNewerFormat = errors.New("written by a newer kandev")

// NewerFormatError names what a newer kandev wrote and its format.
type NewerFormatError struct {
	What   string // "kandev home /path", "session ID"
	Format int
}

func (e *NewerFormatError) Error() string {
	return fmt.Sprintf("%s was written by a newer kandev (format %d); upgrade kandev", e.What, e.Format)
}

// Unwrap makes errors.Is(err, ErrNewerFormat) true.
func (e *NewerFormatError) Unwrap() error { return ErrNewerFormat }

// FormatPath is the file that holds the home's format version.
func (h *Home) FormatPath() string { return filepath.Join(h.Dir, "format") }

// HomeFormat reads the home's format file; 0 when there is none (a home
// written before formats were numbered, or one not used yet).
func (h *Home) HomeFormat() (int, error) {
	b, err := os.ReadFile(h.FormatPath())
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("format file %s is corrupt (%q): it should hold one number, %d for this kandev", h.FormatPath(), bytes.TrimSpace(b), Format)
	}
	return n, nil
}

// checkFormat refuses a home of a newer format and writes the format file of
// one that has none yet. A home that cannot be written (read-only) stays
// readable: its file is written by the next command that can.
func (h *Home) checkFormat() error {
	n, err := h.HomeFormat()
	if err != nil {
		return err
	}
	if n > Format {
		return &NewerFormatError{What: "kandev home " + h.Dir, Format: n}
	}
	if n < Format {
		_ = safefile.WriteFileAtomic(h.FormatPath(), []byte(strconv.Itoa(Format)+"\n"))
	}
	return nil
}

// decodeRecord parses a session record, keeping the keys this kandev does
// not know in Unknown so that a rewrite by this kandev preserves them. It
// reads, and fails, as encoding/json would (its v1 options), with the
// mirror of encoding/json/v2, which collects the unknown keys as it goes and
// reads ten thousand records in about two thirds of encoding/json's time.
func decodeRecord(b []byte, s *Session) error {
	if err := CheckNesting(b); err != nil {
		return err
	}
	var r struct {
		Session
		Unknown map[string]jsontext.Value `json:",embed"`
	}
	if err := jsonv2.Unmarshal(b, &r, jsonv1.DefaultOptionsV1()); err != nil {
		if jerr := json.Unmarshal(b, new(Session)); jerr != nil {
			return jerr // its words, which name the record's type
		}
		return err
	}
	*s = r.Session
	for k, v := range r.Unknown {
		if s.Unknown == nil {
			s.Unknown = make(map[string]json.RawMessage, len(r.Unknown))
		}
		s.Unknown[k] = json.RawMessage(v)
	}
	upgradeRecord(s)
	return nil
}

// upgradeRecord reads what older formats wrote in their own shape. Before
// format 2 a pause was only a reason string ("paused") and the owed turn was
// the session's last one.
func upgradeRecord(s *Session) {
	if s.Format >= 2 {
		return
	}
	var reason string
	if raw, ok := s.Unknown["paused"]; !ok || json.Unmarshal(raw, &reason) != nil {
		return
	}
	delete(s.Unknown, "paused")
	turn := fmt.Sprintf("t%d", s.Turns)
	if reason == "" || s.Pause != nil || s.ContinuedTurn == turn {
		return
	}
	kind := legacyPauseKind(reason)
	if kind == PauseStopped {
		s.Stopped = true // an explicit stop drops the continuation
		return
	}
	s.Pause = &Pause{Kind: kind, Reason: reason, Turn: turn}
	if s.Interrupted == nil {
		s.Interrupted = &Interruption{Turn: turn, PermissionOpen: kind == PausePermissionPending}
	}
}

// legacyPauseKind maps the reasons format 1 wrote to pause kinds.
func legacyPauseKind(reason string) string {
	switch {
	case strings.HasPrefix(reason, "a permission request was pending"):
		return PausePermissionPending
	case strings.HasPrefix(reason, "the agent profile or its command changed"):
		return PauseAgentChanged
	case strings.HasPrefix(reason, "the session was stopped explicitly"):
		return PauseStopped
	case strings.HasPrefix(reason, "the automatic continuation budget is spent"):
		return PauseBudget
	case strings.HasPrefix(reason, "the worktree"):
		return PauseWorktree
	}
	return PauseAgentChanged // an operator must look; re-checked like any pause
}

// MaxRecordDepth is how deeply a record's values may nest. kandev's own
// fields nest four levels; a value nested thousands deep (an unknown field
// of a hostile or broken record) would cost the indented rewrite of the
// record space quadratic in its depth, and beyond 10,000 levels no JSON
// encoder takes it at all.
const MaxRecordDepth = 64

// ErrTooDeep marks a record whose values nest deeper than MaxRecordDepth.
var ErrTooDeep = errors.New("nested too deep")

// CheckNesting refuses a JSON document whose arrays and objects nest deeper
// than MaxRecordDepth, reading it once without decoding it.
func CheckNesting(b []byte) error {
	if bytes.Count(b, []byte{'{'})+bytes.Count(b, []byte{'['}) <= MaxRecordDepth {
		return nil // the common case, decided at memory speed
	}
	depth, inString := 0, false
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '{' || c == '[':
			if depth++; depth > MaxRecordDepth {
				return fmt.Errorf("its values are %w (more than %d levels, at byte %d)", ErrTooDeep, MaxRecordDepth, i)
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return nil
}

// encodeRecord is the record as written: indented JSON, the fields this
// kandev knows first, then the unknown ones it read, in key order. It fails
// only for a record no file could have given (see CheckNesting).
func encodeRecord(s *Session) ([]byte, error) {
	if len(s.Unknown) == 0 {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, fmt.Errorf("encode session record %s: %w", s.ID, err)
		}
		return append(b, '\n'), nil
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("encode session record %s: %w", s.ID, err)
	}
	keys := make([]string, 0, len(s.Unknown))
	for k := range s.Unknown {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	flat := bytes.NewBuffer(b[: len(b)-1 : len(b)-1])
	for _, k := range keys {
		kb, _ := json.Marshal(k)
		flat.WriteByte(',')
		flat.Write(kb)
		flat.WriteByte(':')
		flat.Write(s.Unknown[k])
	}
	flat.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, flat.Bytes(), "", "  "); err != nil {
		return nil, fmt.Errorf("encode session record %s: %w", s.ID, err)
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}
