package board

import "github.com/charmbracelet/bubbles/key"

// keyMap is every key of the board; its help line is the bubbles help.
type keyMap struct {
	Left, Right, Up, Down key.Binding
	Attach, Approve, Deny key.Binding
	Answer, Resume        key.Binding
	Cancel, Close         key.Binding
	Transcript, Filter    key.Binding
	Project, Fold         key.Binding
	Help, Quit            key.Binding
}

// actionKeys maps a key binding to the action it runs.
func (k keyMap) actionKeys() []struct {
	b    key.Binding
	name string
} {
	return []struct {
		b    key.Binding
		name string
	}{
		{k.Attach, ActAttach}, {k.Approve, ActApprove}, {k.Deny, ActDeny}, {k.Answer, ActAnswer},
		{k.Resume, ActResume}, {k.Cancel, ActCancel}, {k.Close, ActClose}, {k.Transcript, ActTranscript},
	}
}

func newKeyMap() keyMap {
	b := func(help string, desc string, keys ...string) key.Binding {
		return key.NewBinding(key.WithKeys(keys...), key.WithHelp(help, desc))
	}
	return keyMap{
		Left:       b("←/h", "column", "left", "h"),
		Right:      b("→/l", "column", "right", "l"),
		Up:         b("↑/k", "up", "up", "k"),
		Down:       b("↓/j", "down", "down", "j"),
		Attach:     b("enter", "attach", "enter"),
		Approve:    b("y", "approve", "y"),
		Deny:       b("n", "deny", "n"),
		Answer:     b("a", "answer", "a"),
		Resume:     b("r", "resume", "r"),
		Cancel:     b("c", "cancel", "c"),
		Close:      b("x", "close", "x"),
		Transcript: b("t", "transcript", "t"),
		Filter:     b("/", "filter", "/"),
		Project:    b("p", "this project", "p"),
		Fold:       b("z", "all done", "z"),
		Help:       b("?", "keys", "?"),
		Quit:       b("q", "quit", "q", "ctrl+c"),
	}
}

// ShortHelp is the help line under the board.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Quit, k.Help, k.Attach, k.Approve, k.Deny, k.Answer, k.Resume, k.Cancel, k.Close, k.Transcript, k.Filter}
}

// FullHelp is every key, by kind (?).
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Left, k.Right, k.Up, k.Down},
		{k.Attach, k.Resume, k.Transcript},
		{k.Approve, k.Deny, k.Answer},
		{k.Cancel, k.Close},
		{k.Filter, k.Project, k.Fold, k.Help, k.Quit},
	}
}
