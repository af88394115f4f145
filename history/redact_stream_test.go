package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/kandev/kandev/eventlog"
	"github.com/kandev/kandev/state"
)

// streamedSecret is a message that carries one secret of a shape Redact knows.
type streamedSecret struct {
	name, text string
	secrets    []string // none may survive anywhere
}

func streamedSecrets() []streamedSecret {
	jwt := fake("eyJ", 20) + "." + fake("eyJ", 30) + "." + fake("", 43)
	v := fake("Zq8", 14)
	tokens := []struct{ name, token string }{
		{"openai", fake("sk-", 48)}, {"openai project", fake("sk-proj-", 64)},
		{"anthropic", fake("sk-ant-api03-", 80)}, {"stripe live", fake("sk_live_", 24)},
		{"stripe restricted", fake("rk_test_", 24)}, {"github classic", fake("ghp_", 36)},
		{"github oauth", fake("gho_", 36)}, {"github user", fake("ghu_", 36)},
		{"github app", fake("ghs_", 36)}, {"github refresh", fake("ghr_", 36)},
		{"github fine grained", fake("github_pat_", 82)}, {"slack bot", fake("xoxb-", 50)},
		{"slack user", fake("xoxp-", 60)}, {"google", fake("AIza", 35)},
		{"aws", fakeUpper("AKIA", 16)}, {"aws session", fakeUpper("ASIA", 16)},
		{"hugging face", fake("hf_", 34)}, {"npm", fake("npm_", 36)},
		{"gitlab", fake("glpat-", 20)}, {"jwt", jwt},
	}
	body := []string{fake("MIIEow", 58), fake("IBAAK", 60), fake("q9Xw", 40) + "=="}
	cases := []streamedSecret{
		{"bearer", "then curl sends Bearer " + v + " to the api", []string{v}},
		{"authorization bearer", "Authorization: Bearer " + v + "\nok", []string{v}},
		{"authorization basic", "headers:\n  Authorization: Basic " + v + "==\n  Accept: json", []string{v}},
		{"key=value", "export OPENAI_API_KEY=" + v + " && make", []string{v}},
		{"key: value at line end", "db:\n  password: " + v + "\n  user: app", []string{v}},
		{"json field", `{"client_secret": "` + v + `", "client_id": "abc"}`, []string{v}},
		{"escaped json field", `{\"access_token\":\"` + v + `\",\"n\":1}`, []string{v}},
		{"quoted with spaces", "passphrase: 'correct horse " + v + " staple' and more", []string{v}},
		{"flag with space", "mytool --password " + v + " --verbose", []string{v}},
		{"flag with equals", "mytool --api-key=" + v + " run", []string{v}},
		{"url userinfo", "git clone https://alice:" + v + "@github.com/org/repo.git now", []string{v}},
		{"private key block", "here it is:\n-----BEGIN RSA PRIVATE KEY-----\n" + strings.Join(body, "\n") + "\n-----END RSA PRIVATE KEY-----\ndone", body},
		{"non-ascii around", "密钥是 " + tokens[0].token + " です。", []string{tokens[0].token}},
	}
	for _, tk := range tokens {
		cases = append(cases, streamedSecret{"token " + tk.name, "I found " + tk.token + " in the config.", []string{tk.token}})
	}
	return cases
}

// splits returns every 2-chunk split of s (on character boundaries) and
// random 3 to 8 chunk splits.
func splits(s string, rng *rand.Rand, random int) [][]string {
	var out [][]string
	for i := 1; i < len(s); i++ {
		if utf8.RuneStart(s[i]) {
			out = append(out, []string{s[:i], s[i:]})
		}
	}
	positions := len(out)
	for range random {
		n := min(3+rng.IntN(6), positions+1)
		cuts := map[int]bool{}
		for len(cuts) < n-1 {
			if i := 1 + rng.IntN(len(s)-1); utf8.RuneStart(s[i]) {
				cuts[i] = true
			}
		}
		var chunks []string
		last := 0
		for i := 1; i < len(s); i++ {
			if cuts[i] {
				chunks = append(chunks, s[last:i])
				last = i
			}
		}
		out = append(out, append(chunks, s[last:]))
	}
	return out
}

// streamTurn feeds chunks through r as the owner does (in batches of random
// size), ends the turn, and returns the events to append.
func streamTurn(r *StreamRedactor, turn string, chunks []string, rng *rand.Rand) []*eventlog.Event {
	var out []*eventlog.Event
	for i := 0; i < len(chunks); {
		n := 1 + rng.IntN(3)
		var batch []*eventlog.Event
		for ; n > 0 && i < len(chunks); n, i = n-1, i+1 {
			batch = append(batch, &eventlog.Event{Type: eventlog.EventAgentMessage, Role: "assistant", TurnID: turn, Content: chunks[i]})
		}
		out = append(out, r.Events(batch)...)
	}
	return append(out, r.Events([]*eventlog.Event{{Type: eventlog.EventTurnEnded, TurnID: turn, StopReason: "end_turn"}})...)
}

func TestStreamRedactor_NoSecretSurvivesAnySplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 6))
	for _, c := range streamedSecrets() {
		t.Run(c.name, func(t *testing.T) {
			whole := Redact(c.text)
			for _, s := range c.secrets {
				if strings.Contains(whole, s) {
					t.Fatalf("Redact does not catch the case itself: %q", whole)
				}
			}
			h, err := state.OpenHome(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			log, _, err := h.OpenLog("ses-stream", eventlog.OpenLogOptions{Redact: RedactEvent})
			if err != nil {
				t.Fatal(err)
			}
			var r StreamRedactor
			all := splits(c.text, rng, 100)
			for i, chunks := range all {
				turn := fmt.Sprintf("t%d", i+1)
				evs := append([]*eventlog.Event{{Type: eventlog.EventTurnStarted, TurnID: turn}}, streamTurn(&r, turn, chunks, rng)...)
				if err := log.Append(evs...); err != nil {
					t.Fatal(err)
				}
			}
			log.Close()
			checkStoredStreams(t, h.LogPath("ses-stream"), c, whole, len(all))
		})
	}
}

// checkStoredStreams reads the log back: no line holds a secret, and each
// turn's chunks concatenate to the redacted message, whose transcript and
// recap hold no secret either.
func checkStoredStreams(t *testing.T, path string, c streamedSecret, whole string, turns int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	byTurn := map[string][]eventlog.Event{}
	var all []eventlog.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e eventlog.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatal(err)
		}
		for _, s := range c.secrets {
			if strings.Contains(sc.Text(), s) || strings.Contains(e.Content, s) {
				t.Fatalf("a stored line holds the secret: %s", sc.Text())
			}
		}
		byTurn[e.TurnID] = append(byTurn[e.TurnID], e)
		all = append(all, e)
	}
	for i := 1; i <= turns; i++ {
		var text strings.Builder
		for _, e := range byTurn[fmt.Sprintf("t%d", i)] {
			if e.Type == eventlog.EventAgentMessage {
				text.WriteString(e.Content)
			}
		}
		if text.String() != whole {
			t.Fatalf("turn t%d: the chunks concatenate to\n%q\nwant Redact of the message\n%q", i, text.String(), whole)
		}
	}
	recap, _, _ := BuildRecap(RecapInput{Window: all, Limit: MaxRecapLimit})
	views, _ := json.Marshal(map[string]any{"transcript": Assemble(all), "recap": recap})
	views = append(views, RenderText(Assemble(all))...)
	for _, s := range c.secrets {
		if strings.Contains(string(views), s) {
			t.Fatalf("the transcript or recap holds the secret")
		}
	}
}

// TestStreamRedactor_ChunksConcatenateToRedactOfTheWhole checks the cut rule
// against Redact itself on random text made of the pieces secrets and near
// misses are made of.
func TestStreamRedactor_ChunksConcatenateToRedactOfTheWhole(t *testing.T) {
	pieces := []string{
		" ", " ", " ", "\n", "\t", "the", "token", "key", "api_key", "Bearer", "Authorization", "auth",
		"password", "--token", "--api-key", ":", ": ", "=", " = ", `"`, "'", `\"`, "\\", "(", "[", ",",
		"https://", "u:p@", "@", "/", "sk-", fake("", 24), "ghp_" + fake("", 36), "AKIA", "QWERTYUIOPASDFGH",
		"eyJ" + fake("", 10), ".", "-----BEGIN ", "RSA ", "PRIVATE KEY-----", "-----END ", "CERTIFICATE-----",
		"密钥", "é", "-", "--", "$HOME", "${X}", "null", "is", "changeme", Redacted, "\r\n",
	}
	rng := rand.New(rand.NewPCG(8, 1))
	for iter := 0; iter < 4000; iter++ {
		var b strings.Builder
		for n := 2 + rng.IntN(30); n > 0; n-- {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		text := b.String()
		want := Redact(text)
		for _, chunks := range splits(text, rng, 3)[len(text)/2:] {
			var r StreamRedactor
			var got strings.Builder
			for _, e := range streamTurn(&r, "t1", chunks, rng) {
				if e.Type == eventlog.EventAgentMessage {
					got.WriteString(e.Content)
				}
			}
			if got.String() != want {
				t.Fatalf("chunks %q\n got %q\nwant %q", chunks, got.String(), want)
			}
		}
	}
}

func TestStreamRedactor_HoldsOnlyWhatMayBeASecret(t *testing.T) {
	cases := []struct {
		chunk, written string
	}{
		{"Hello there, I will look at the parser", "Hello there, I will look at the parser"},
		{"The map key is stored in the cache ", "The map key is stored in the cache "},
		{"set it with OPENAI_API_KEY=", "set it with "},
		{"the token: it expires in", "the token: it expires in"},
		{"the token: it", "the "},
		{"the key may be gh", "the key may be "},
		{"or maybe x", "or maybe "},
		{"line one\nAuthorization: Basic abc def", "line one\n"},
		{"-----BEGIN", ""},
		{"日本語のテキストです", "日本語のテキストです"},
	}
	for _, c := range cases {
		var r StreamRedactor
		out := r.Events([]*eventlog.Event{{Type: eventlog.EventAgentMessage, TurnID: "t1", Content: c.chunk}})
		got := ""
		if len(out) == 1 {
			got = out[0].Content
		}
		if got != c.written {
			t.Errorf("after %q wrote %q, want %q", c.chunk, got, c.written)
		}
	}
}

func TestStreamRedactor_ReleasesHeldTextBeforeAnyOtherEventInOrder(t *testing.T) {
	var r StreamRedactor
	msg := func(typ, turn, text string) *eventlog.Event {
		return &eventlog.Event{Type: typ, TurnID: turn, Content: text}
	}
	var got []string
	for _, batch := range [][]*eventlog.Event{
		{msg(eventlog.EventAgentMessage, "t1", "Use the token")},
		{msg(eventlog.EventAgentThought, "t1", "thinking gh")},
		{msg(eventlog.EventAgentMessage, "t1", "p_ and more"), {Type: eventlog.EventToolCall, TurnID: "t1"}},
		{msg(eventlog.EventAgentMessage, "t1", "my sk")},
		{msg(eventlog.EventAgentMessage, "t2", "next")},
		{{Type: eventlog.EventAgentExited}},
	} {
		for _, e := range r.Events(batch) {
			got = append(got, e.Type+"/"+e.TurnID+":"+e.Content)
		}
	}
	want := []string{
		"agent_message/t1:Use the ", "agent_message/t1:token", "agent_thought/t1:thinking ", "agent_thought/t1:gh",
		"agent_message/t1:p_ and more", "tool_call/t1:", "agent_message/t1:my ", "agent_message/t1:sk",
		"agent_message/t2:next", "agent_exited/:",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("events\n got %q\nwant %q", got, want)
	}
}

func TestStreamRedactor_OverlongOpenValueIsRedactedToTheEndOfItsLine(t *testing.T) {
	secret := strings.Repeat(fake("", 64), MaxHeldBytes/64+8)
	text := "Authorization: Basic " + secret + " tail\nafter the line"
	var r StreamRedactor
	var got strings.Builder
	for _, e := range streamTurn(&r, "t1", splitEvery(text, 100), rand.New(rand.NewPCG(1, 2))) {
		got.WriteString(e.Content)
		if len(e.Content) > MaxHeldBytes+len(Redacted) {
			t.Errorf("a chunk of %d bytes: more than the bound was held", len(e.Content))
		}
	}
	if want := Redacted + "\nafter the line"; got.String() != want {
		t.Errorf("got %.200q, want %q", got.String(), want)
	}
}

func TestStreamRedactor_LongPrivateKeyBlockIsDroppedAsItArrives(t *testing.T) {
	var body strings.Builder
	for i := 0; body.Len() < 3*MaxHeldBytes; i++ {
		body.WriteString(fake(fmt.Sprint(i), 64) + "\n")
	}
	text := "key:\n-----BEGIN OPENSSH PRIVATE KEY-----\n" + body.String() + "-----END OPENSSH PRIVATE KEY-----\nok"
	var r StreamRedactor
	var got strings.Builder
	for _, e := range streamTurn(&r, "t1", splitEvery(text, 7), rand.New(rand.NewPCG(3, 4))) {
		got.WriteString(e.Content)
	}
	if want := Redact(text); got.String() != want {
		t.Errorf("got %.300q\nwant %q", got.String(), want)
	}
}

func splitEvery(s string, n int) []string {
	var out []string
	for len(s) > n {
		out, s = append(out, s[:n]), s[n:]
	}
	return append(out, s)
}

// BenchmarkStreamRedactor_ChunkLateInALongTurn measures one 20-byte chunk of
// prose with a trigger word now and then, after a turn of 1,000 or 100,000
// chunks: the cost depends on the held tail, not on the turn's length.
func BenchmarkStreamRedactor_ChunkLateInALongTurn(b *testing.B) {
	words := strings.Fields("I will update the parser so the token: it is read once and the api key is kept in memory; see https://example.com for the auth flow.")
	chunk := func(i int) string { return words[i%len(words)] + " " + words[(i*7)%len(words)] + " " }
	for _, before := range []int{1_000, 100_000} {
		b.Run(fmt.Sprintf("after=%d", before), func(b *testing.B) {
			var r StreamRedactor
			ev := eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: "t1"}
			batch := []*eventlog.Event{&ev}
			for i := range before {
				ev.Content = chunk(i)
				r.Events(batch)
			}
			b.ReportAllocs()
			i := before
			for b.Loop() {
				ev.Content = chunk(i)
				r.Events(batch)
				i++
			}
		})
	}
}

// BenchmarkStreamRedactor_Chunk200B streams the 200-byte prose chunk the
// Redact benchmarks use, for comparison with redacting each chunk alone.
func BenchmarkStreamRedactor_Chunk200B(b *testing.B) {
	var r StreamRedactor
	ev := eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: "t1"}
	batch := []*eventlog.Event{&ev}
	b.SetBytes(int64(len(benchChunk)))
	b.ReportAllocs()
	for b.Loop() {
		ev.Content = benchChunk
		r.Events(batch)
	}
}

// BenchmarkStreamRedactor_ChunkWhileNearTheBound is the worst case: an
// Authorization header line held at close to MaxHeldBytes is scanned again
// for each 20-byte chunk (the line is restarted before it reaches the bound).
func BenchmarkStreamRedactor_ChunkWhileNearTheBound(b *testing.B) {
	var r StreamRedactor
	ev := eventlog.Event{Type: eventlog.EventAgentMessage, TurnID: "t1"}
	batch := []*eventlog.Event{&ev}
	chunk := fake("", 19) + " "
	ev.Content = "Authorization: Basic " + strings.Repeat(chunk, (MaxHeldBytes-1024)/len(chunk))
	r.Events(batch)
	held := len(r.st.pending)
	b.ReportAllocs()
	for b.Loop() {
		if len(r.st.pending)+len(chunk) > MaxHeldBytes {
			b.StopTimer()
			ev.Content = "\n"
			r.Events(batch)
			ev.Content = "Authorization: Basic " + strings.Repeat(chunk, (MaxHeldBytes-1024)/len(chunk))
			r.Events(batch)
			b.StartTimer()
		}
		ev.Content = chunk
		r.Events(batch)
	}
	b.ReportMetric(float64(held), "held-bytes")
}

func TestAssemble_RedactsASecretSplitAcrossStoredChunks(t *testing.T) {
	key := fake("sk-", 48)
	var evs []eventlog.Event
	for i, c := range []string{"the key is ", key[:10], key[10:30], key[30:], " ok"} {
		e := eventlog.Event{Seq: int64(i + 1), Type: eventlog.EventAgentMessage, TurnID: "t1", Content: c}
		RedactEvent(&e) // chunk by chunk, as an older kandev wrote its logs
		evs = append(evs, e)
	}
	entries := Assemble(evs)
	if len(entries) != 1 || entries[0].Message.Parts[0].Text != "the key is "+Redacted+" ok" {
		t.Errorf("assembled %+v", entries)
	}
}
