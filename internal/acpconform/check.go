package acpconform

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/tidwall/gjson"
)

// SchemaVersion is the @agentclientprotocol/sdk release schema/ was copied
// from.
const SchemaVersion = "2.4.0"

//go:embed schema/v1/schema.json schema/v1/schema.unstable.json
var schemas embed.FS

// Checker validates the messages of the agent side of ACP (what kandev acp
// and the demo agent send).
type Checker struct {
	stable, unstable *schemaSet
}

// schemaSet is one schema file: its definitions, resolved on first use, and
// the methods its definitions are for.
type schemaSet struct {
	root    *jsonschema.Schema
	methods map[string]methodDefs
	mu      sync.Mutex
	cache   map[string]*jsonschema.Resolved
}

// methodDefs names the definitions of one method, by the side that
// handles it ("agent": the client calls it; "client": the agent does).
type methodDefs struct {
	side                   string
	request, response, msg string // msg: a notification's params
}

var load = sync.OnceValues(func() (*Checker, error) {
	stable, err := readSchema("schema/v1/schema.json")
	if err != nil {
		return nil, err
	}
	unstable, err := readSchema("schema/v1/schema.unstable.json")
	if err != nil {
		return nil, err
	}
	return &Checker{stable: stable, unstable: unstable}, nil
})

// Load reads the embedded schemas once.
func Load() (*Checker, error) { return load() }

func readSchema(path string) (*schemaSet, error) {
	b, err := schemas.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var root jsonschema.Schema
	if err := json.Unmarshal(b, &root); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var ann struct {
		Defs map[string]struct {
			Method string `json:"x-method"`
			Side   string `json:"x-side"`
		} `json:"$defs"`
	}
	if err := json.Unmarshal(b, &ann); err != nil {
		return nil, err
	}
	set := &schemaSet{root: &root, methods: map[string]methodDefs{}, cache: map[string]*jsonschema.Resolved{}}
	for name, d := range ann.Defs {
		if d.Method == "" {
			continue
		}
		m := set.methods[d.Method]
		m.side = d.Side
		switch {
		case strings.HasSuffix(name, "Request"):
			m.request = name
		case strings.HasSuffix(name, "Response"):
			m.response = name
		default:
			m.msg = name
		}
		set.methods[d.Method] = m
	}
	return set, nil
}

// validate checks v against definition def.
func (s *schemaSet) validate(def string, v any) error {
	s.mu.Lock()
	r, ok := s.cache[def]
	if !ok {
		var err error
		r, err = (&jsonschema.Schema{Ref: "#/$defs/" + def, Defs: s.root.Defs}).Resolve(nil)
		if err != nil {
			s.mu.Unlock()
			return fmt.Errorf("schema %s: %w", def, err)
		}
		s.cache[def] = r
	}
	s.mu.Unlock()
	return r.Validate(v)
}

// lookup finds a method in the stable schema, else the unstable one.
func (c *Checker) lookup(method string) (*schemaSet, methodDefs, bool) {
	if m, ok := c.stable.methods[method]; ok {
		return c.stable, m, true
	}
	m, ok := c.unstable.methods[method]
	return c.unstable, m, ok
}

// lines splits a stream into its non-empty lines.
func lines(b []byte) [][]byte {
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, append([]byte(nil), l...))
		}
	}
	return out
}

// Violation is one message that breaks the protocol.
type Violation struct {
	Line    int    // 1-based, in the written stream
	Message string // the message, cut
	Problem string
}

func (v Violation) String() string {
	return fmt.Sprintf("line %d: %s\n    %s", v.Line, v.Problem, v.Message)
}

// peer is what the other side said: the methods of its requests by id and
// what it declared in initialize.
type peer struct {
	methods     map[string]string
	booleans    bool
	fsRead      bool
	fsWrite     bool
	terminal    bool
	elicitation bool
	subagents   bool
	// seen counts the notifications of each kind; validated the messages
	// checked against the schema.
	seen      map[string]int
	validated int
}

func readPeer(in []byte) *peer {
	p := &peer{methods: map[string]string{}}
	for _, l := range lines(in) {
		id, method := gjson.GetBytes(l, "id"), gjson.GetBytes(l, "method").Str
		if !id.Exists() || method == "" {
			continue
		}
		p.methods[id.Raw] = method
		if method == "initialize" {
			caps := gjson.GetBytes(l, "params.clientCapabilities")
			p.booleans = caps.Get("session.configOptions.boolean").IsObject()
			p.fsRead, p.fsWrite = caps.Get("fs.readTextFile").Bool(), caps.Get("fs.writeTextFile").Bool()
			p.terminal = caps.Get("terminal").Bool()
			p.elicitation = caps.Get("elicitation").IsObject()
			p.subagents = caps.Get("subagents").IsObject()
		}
	}
	return p
}
