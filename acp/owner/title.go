package owner

import (
	"strings"

	"github.com/tidwall/gjson"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/history"
	"github.com/kandev/kandev/state"
)

// titleMax bounds a title the agent sends, as a fork's default title is.
const titleMax = 80

// AgentTitle is the title an agent's session_info_update gives the session,
// first line only, redacted and clipped; ok is false when the update names no
// title (absent, null or blank: kandev keeps the one it has).
func AgentTitle(update []byte) (title string, ok bool) {
	if gjson.GetBytes(update, "sessionUpdate").String() != "session_info_update" {
		return "", false
	}
	t := gjson.GetBytes(update, "title")
	if t.Type != gjson.String {
		return "", false
	}
	line := strings.TrimSpace(strings.SplitN(t.String(), "\n", 2)[0])
	if line == "" {
		return "", false
	}
	return history.Clip(history.Redact(line), titleMax), true
}

// noteAgentTitle makes the title an agent sends (session_info_update) the
// session's title, unless the person named the session (TitleNamed): list
// and status show it. Runs on the recorder goroutine.
func (o *owner) noteAgentTitle(evs []*eventlog.Event) {
	for _, e := range evs {
		if e.Type != eventlog.EventAgentUpdate {
			continue
		}
		title, ok := AgentTitle(e.Data)
		if !ok {
			continue
		}
		o.update(func(s *state.Session) {
			if !s.TitleNamed {
				s.Title = title
			}
		})
	}
}

// NameSession gives session id the title the person chose (kandev set
// --title): recorded at once, also while an owner runs (the record is
// changed under its own lock), and kept over any title the agent sends.
func NameSession(h *state.Home, id, title string) (*state.Session, error) {
	return h.UpdateSession(id, func(s *state.Session) error {
		s.Title, s.TitleNamed = history.Redact(title), true
		return nil
	})
}
