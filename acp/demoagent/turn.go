package demoagent

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	acp "github.com/coder/acp-go-sdk"
)

// exit is os.Exit, replaceable so that /crash can be tested in-process.
var exit = os.Exit

var errCrashed = errors.New("crash requested")

// Prompt implements acp.Agent: it runs one turn of directives.
func (a *agent) Prompt(ctx context.Context, p acp.PromptRequest) (resp acp.PromptResponse, err error) {
	id := string(p.SessionId)
	s := a.lookup(id)
	if s == nil {
		return acp.PromptResponse{}, errNoSession(id)
	}
	if !a.enter() {
		return acp.PromptResponse{}, internalError(errors.New("shutting down"))
	}
	defer a.busy.Done()
	ctx, cancel := a.scope(ctx)
	defer cancel()
	defer s.running.start(cancel)() // session/close cancels it too

	// The SDK cancels a session's running turn when the next prompt arrives;
	// waiting here lets that turn save its entries before this one starts.
	s.turn.Lock()
	defer s.turn.Unlock()

	text := promptText(p.Prompt)
	s.file.Entries = append(s.file.Entries, entry{Role: roleUser, Text: text})
	if err := save(a.opts.Dir, &s.file); err != nil {
		return acp.PromptResponse{}, internalError(err)
	}

	t := &turn{a: a, s: s, ctx: ctx, user: len(s.file.Entries) - 1}
	s.steer.begin()
	runErr := t.run(text)
	if runErr == nil {
		runErr = t.runSteered() // steer.go
	}
	s.steer.end()
	if err := save(a.opts.Dir, &s.file); err != nil {
		return acp.PromptResponse{}, internalError(err)
	}
	if runErr == nil || ctx.Err() != nil {
		// The turn ends with an answer: report what the conversation costs now.
		_ = a.send(a.alive, s.file.ID, usage(&s.file))
	}
	var limit limitReached
	switch {
	case ctx.Err() != nil, errors.Is(runErr, errAborted):
		return acp.PromptResponse{StopReason: acp.StopReasonCancelled}, nil
	case errors.As(runErr, &limit):
		return acp.PromptResponse{}, limit.answer()
	case runErr != nil:
		return acp.PromptResponse{}, internalError(runErr)
	}
	return acp.PromptResponse{StopReason: acp.StopReasonEndTurn}, nil
}

// promptText joins the text blocks, keeping block boundaries as line
// boundaries so that a directive never fuses with the block before it.
func promptText(blocks []acp.ContentBlock) string {
	var b strings.Builder
	for _, c := range blocks {
		if c.Text == nil {
			continue
		}
		if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
			b.WriteByte('\n')
		}
		b.WriteString(c.Text.Text)
	}
	return b.String()
}

// turn is one prompt being processed; it owns s.file until it returns.
type turn struct {
	a    *agent
	s    *session
	ctx  context.Context
	user int // index of this prompt's user entry

	spoke, thought bool // a message was already sent, so the next one starts a new line
}

func (t *turn) run(text string) error {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if err := t.ctx.Err(); err != nil {
			return err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if err := t.directive(line, lines[:i]); err != nil {
			return err
		}
	}
	return nil
}

// directive runs one line; before holds the prompt's earlier lines.
// Malformed directives are echoed like plain text.
func (t *turn) directive(line string, before []string) error {
	verb, arg, _ := strings.Cut(line, " ")
	arg = strings.TrimLeft(arg, " \t")
	switch verb {
	case "remember":
		if f := strings.Fields(arg); len(f) == 1 {
			return t.message(roleAgent, "OK, I will remember "+f[0]+".")
		}
	case "recall":
		if arg == "" {
			return t.recall(before)
		}
	case "/sleep":
		if ms, err := strconv.Atoi(arg); err == nil && ms >= 0 {
			return sleep(t.ctx, msToDuration(ms))
		}
	case "/say":
		if arg != "" {
			return t.message(roleAgent, split(arg, 4)...)
		}
	case "/stream":
		if size, text, _ := strings.Cut(arg, " "); text != "" {
			if n, err := strconv.Atoi(size); err == nil && n > 0 {
				return t.message(roleAgent, chunksOf(text, n)...)
			}
		}
	case "/think":
		if arg != "" {
			return t.message(roleThought, split(arg, 4)...)
		}
	case "/read":
		if arg != "" {
			return t.read(arg)
		}
	case "/write":
		if path, content, _ := strings.Cut(arg, " "); path != "" {
			return t.write(path, strings.TrimLeft(content, " \t"))
		}
	case "/terminal", "/terminal!":
		if arg != "" {
			return t.runTerminal(arg, verb == "/terminal")
		}
	case "/terminal&":
		if arg != "" {
			return t.leaveTerminal(arg)
		}
	case "/ask":
		if arg != "" {
			return t.ask(arg)
		}
	case "/bulk":
		if n, err := strconv.Atoi(arg); err == nil && n > 0 {
			return t.bulk(n)
		}
	case "/subagent-bad":
		if handled, err := t.badSubagent(arg); handled { // subagent_bad.go
			return err
		}
	case "/subagent", "/subagent-bg":
		if name, text, _ := strings.Cut(arg, " "); strings.TrimSpace(text) != "" {
			return t.subagent(name, strings.TrimSpace(text), verb == "/subagent-bg") // subagent.go
		}
	case "/crash":
		if arg == "" {
			return t.crash()
		}
	case "/compact":
		if arg == "" {
			return t.compact()
		}
	default:
		if handled, err := t.sessionDirective(verb, arg); handled {
			return err
		}
	}
	return t.message(roleAgent, "echo: "+line)
}

// sessionDirective runs the directives about the session and the agent
// itself (its setup, title, tools, an abort, a limit); handled is false
// for a line that is none of them, which directive echoes.
func (t *turn) sessionDirective(verb, arg string) (handled bool, err error) {
	switch verb {
	case "/setup":
		if arg == "" {
			return true, t.message(roleAgent, setupLine(&t.s.file))
		}
	case "/mode":
		if arg != "" {
			return true, t.switchMode(arg)
		}
	case "/title":
		if arg != "" {
			return true, t.title(arg)
		}
	case "/tools":
		if arg == "" {
			return true, t.tools()
		}
	case "/mcp":
		if tool, args, _ := strings.Cut(arg, " "); tool != "" {
			return true, t.mcpCall(tool, strings.TrimSpace(args))
		}
	case "/abort":
		if arg == "" {
			return true, errAborted
		}
	case "/limit":
		if pct, reset, ok := strings.Cut(arg, " "); ok {
			if u, ok := rateLimitUpdate(&t.s.file, pct, strings.TrimSpace(reset), time.Now()); ok {
				return true, t.a.send(t.ctx, t.s.file.ID, u) // usage.go
			}
		} else if secs, err := strconv.Atoi(arg); err == nil && secs >= 0 {
			return true, limitReached{resetAt: time.Now().Add(time.Duration(secs) * time.Second)}
		} else if arg == "-" {
			return true, limitReached{} // the limit, without saying when it resets
		}
	}
	return false, nil
}

// errAborted ends a turn the agent gives up on itself (/abort), as Codex
// does when its only reject option for a command is to abort: the turn
// answers stopReason "cancelled" though nobody cancelled it.
var errAborted = errors.New("the agent aborted its turn")

func msToDuration(ms int) time.Duration {
	return time.Duration(min(ms, math.MaxInt64/int(time.Millisecond))) * time.Millisecond
}

// emit sends the updates for e and records it in the conversation.
func (t *turn) emit(ctx context.Context, e entry) error {
	if err := t.a.replay(ctx, t.s.file.ID, e); err != nil {
		return err
	}
	t.s.file.Entries = append(t.s.file.Entries, e)
	return nil
}

// message sends one agent message or thought made of the given chunks.
func (t *turn) message(role string, chunks ...string) error {
	if err := t.newline(role); err != nil {
		return err
	}
	for _, c := range chunks {
		if err := t.ctx.Err(); err != nil {
			return err
		}
		if err := t.emit(t.ctx, entry{Role: role, Text: c}); err != nil {
			return err
		}
	}
	return nil
}

// newline separates this message from the previous one of the same stream,
// since clients concatenate chunks.
func (t *turn) newline(role string) error {
	seen := &t.spoke
	if role == roleThought {
		seen = &t.thought
	}
	if !*seen {
		*seen = true
		return nil
	}
	return t.emit(t.ctx, entry{Role: role, Text: "\n"})
}

// rememberRe finds "remember WORD" where a user would have typed it: at
// the start of a line or after a speaker tag such as "[USER]:", but not in
// agent prose like "I remember nothing.".
// rememberRe is compiled on first use: every kandev invocation pays for start-up work.
var rememberRe = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("(?m)(?:^|[:>\\]\"'`*-])[ \\t]*remember[ \\t]+(\\S+)")
})

func (t *turn) recall(before []string) error {
	words := t.remembered(before)
	msg := "I remember nothing."
	if len(words) > 0 {
		msg = "You asked me to remember: " + strings.Join(words, ", ") + "."
	}
	if !atDefaults(&t.s.file) {
		msg += "\n" + setupLine(&t.s.file)
	}
	return t.message(roleAgent, msg)
}

// remembered is every WORD of "remember WORD" in the user's text of the
// conversation before this prompt and in before, this prompt's earlier
// lines, in order, once each.
func (t *turn) remembered(before []string) []string {
	var words []string
	seen := map[string]bool{}
	scan := func(text string) {
		for _, m := range rememberRe().FindAllStringSubmatch(text, -1) {
			w := strings.TrimRight(m[1], ".,;:!?\"'`)]}>*")
			if w != "" && !seen[w] {
				seen[w] = true
				words = append(words, w)
			}
		}
	}
	for _, e := range t.s.file.Entries[:t.user] {
		if e.Role == roleUser {
			scan(e.Text)
		}
	}
	scan(strings.Join(before, "\n"))
	return words
}

// compact replaces the conversation before this prompt by the words it
// was asked to remember, as one summary user entry.
func (t *turn) compact() error {
	if t.a.opts.NoCommands {
		return t.message(roleAgent, "echo: /compact")
	}
	words := t.remembered(nil)
	var kept []entry
	if len(words) > 0 {
		kept = append(kept, entry{Role: roleUser, Text: "(summary of the conversation so far)\nremember " + strings.Join(words, "\nremember ")})
	}
	dropped := t.user - len(kept)
	t.s.file.Entries = append(kept, t.s.file.Entries[t.user:]...)
	t.user = len(kept)
	if len(words) == 0 {
		return t.message(roleAgent, fmt.Sprintf("Compacted the conversation (%d entries dropped); nothing to remember.", dropped))
	}
	return t.message(roleAgent, fmt.Sprintf("Compacted the conversation (%d entries dropped); I still remember: %s.", dropped, strings.Join(words, ", ")))
}

// bulk streams n chunks without materialising them, and records them as a
// single compact entry.
func (t *turn) bulk(n int) error {
	if err := t.newline(roleAgent); err != nil {
		return err
	}
	sent := 0
	var err error
	for i := 1; i <= n; i++ {
		if err = t.ctx.Err(); err != nil {
			break
		}
		if err = t.a.send(t.ctx, t.s.file.ID, acp.UpdateAgentMessageText(bulkChunk(i))); err != nil {
			break
		}
		sent = i
	}
	if sent > 0 {
		t.s.file.Entries = append(t.s.file.Entries, entry{Role: roleAgent, Bulk: sent})
	}
	return err
}

// crash sends its last words and kills the process without answering, to
// let clients test recovery from a dying agent.
func (t *turn) crash() error {
	if err := t.emit(t.ctx, entry{Role: roleAgent, Text: "crashing now"}); err != nil {
		return err
	}
	exit(3)
	return errCrashed
}

// split cuts s into at most n pieces of similar size on rune boundaries;
// the pieces concatenate back to s.
func split(s string, n int) []string {
	var out []string
	for ; n > 1 && s != ""; n-- {
		k := (len(s) + n - 1) / n
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	if s != "" {
		out = append(out, s)
	}
	return out
}

// chunksOf cuts s into pieces of n bytes, each stretched to the end of the
// character it would split; the pieces concatenate back to s.
func chunksOf(s string, n int) []string {
	var out []string
	for s != "" {
		k := min(n, len(s))
		for k < len(s) && !utf8.RuneStart(s[k]) {
			k++
		}
		out = append(out, s[:k])
		s = s[k:]
	}
	return out
}

// limitReached is /limit SECONDS: the turn is refused as Claude Code's ACP
// adapter refuses one over the subscription's usage limit. The adapter
// throws RequestError.internalError(undefined, result) with the Claude
// SDK's result text, "Claude AI usage limit reached|<unix seconds of the
// reset>", which the ACP SDK sends as -32603 "Internal error: <text>".
type limitReached struct{ resetAt time.Time }

func (l limitReached) Error() string {
	if l.resetAt.IsZero() {
		return "Claude AI usage limit reached"
	}
	return fmt.Sprintf("Claude AI usage limit reached|%d", l.resetAt.Unix())
}

func (l limitReached) answer() error {
	return &acp.RequestError{Code: -32603, Message: "Internal error: " + l.Error()}
}
