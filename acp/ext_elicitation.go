package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// Elicitation (elicitation/create): the agent asks the person a question,
// with a JSON schema for the answer (ACP protocol version 1, the
// elicitation RFD; acp-go-sdk v0.13.5 carries it as unstable types:
// UnstableCreateElicitationRequest/Response, routed to the client's
// UnstableCreateElicitation). kandev advertises form elicitation
// (clientCapabilities.elicitation.form) when ConnOptions.Elicit is set, and
// answers url-mode questions with a decline: it opens no browser. How a
// question is answered under each permission mode: docs/configuration.md.

// ElicitationQuestion is a form question as kandev handles it.
type ElicitationQuestion struct {
	Message string
	Schema  sdk.UnstableElicitationSchema
}

// ElicitationAnswer is the person's answer: Action is accept (with
// Content), decline or cancel.
type ElicitationAnswer struct {
	Action  string
	Content map[string]any
}

// Elicitation actions.
const (
	ElicitAccept  = "accept"
	ElicitDecline = "decline"
	ElicitCancel  = "cancel"
)

func (a ElicitationAnswer) response() sdk.UnstableCreateElicitationResponse {
	switch a.Action {
	case ElicitAccept:
		return sdk.UnstableCreateElicitationResponse{Accept: &sdk.UnstableCreateElicitationAccept{Action: ElicitAccept, Content: a.Content}}
	case ElicitCancel:
		return sdk.UnstableCreateElicitationResponse{Cancel: &sdk.UnstableCreateElicitationCancel{Action: ElicitCancel}}
	}
	return sdk.UnstableCreateElicitationResponse{Decline: &sdk.UnstableCreateElicitationDecline{Action: ElicitDecline}}
}

// UnstableCreateElicitation answers elicitation/create.
func (cl *client) UnstableCreateElicitation(ctx context.Context, p sdk.UnstableCreateElicitationRequest) (sdk.UnstableCreateElicitationResponse, error) {
	if p.Form == nil || cl.c.opts.Elicit == nil {
		return ElicitationAnswer{Action: ElicitDecline}.response(), nil
	}
	return cl.c.opts.Elicit(ctx, ElicitationQuestion{Message: p.Form.Message, Schema: p.Form.RequestedSchema}).response(), nil
}

// UnstableCompleteElicitation accepts elicitation/complete (url mode,
// which kandev declines): nothing to do.
func (cl *client) UnstableCompleteElicitation(context.Context, sdk.UnstableCompleteElicitationNotification) error {
	return nil
}

// ElicitationFields are the names of a schema's fields, required ones
// first, each group sorted.
func ElicitationFields(s sdk.UnstableElicitationSchema) []string {
	var req, opt []string
	for k := range s.Properties {
		if slices.Contains(s.Required, k) {
			req = append(req, k)
		} else {
			opt = append(opt, k)
		}
	}
	sort.Strings(req)
	sort.Strings(opt)
	return append(req, opt...)
}

// ElicitationContent turns the text a person typed into the answer's
// content under schema s: a JSON object for a form of several fields, or,
// for a form of one field (or one required field), the value of that
// field, converted to its type (string, number, integer, boolean, or a
// comma-separated list for an array); a value outside a field's enum is
// refused. The error says what the question wants.
func ElicitationContent(s sdk.UnstableElicitationSchema, value string) (map[string]any, error) {
	fields := ElicitationFields(s)
	if t := strings.TrimSpace(value); strings.HasPrefix(t, "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(t), &m); err != nil {
			return nil, fmt.Errorf("the answer is not a JSON object: %v", err)
		}
		for _, r := range s.Required {
			if _, ok := m[r]; !ok {
				return nil, fmt.Errorf("the answer lacks the required field %q (fields: %s)", r, strings.Join(fields, ", "))
			}
		}
		for k, v := range m {
			if _, ok := s.Properties[k]; !ok {
				return nil, fmt.Errorf("the question has no field %q (fields: %s)", k, strings.Join(fields, ", "))
			}
			if str, ok := v.(string); ok {
				conv, err := fieldValue(k, s.Properties[k], str)
				if err != nil {
					return nil, err
				}
				m[k] = conv
			}
		}
		return m, nil
	}
	name := ""
	switch {
	case len(fields) == 1:
		name = fields[0]
	case len(s.Required) == 1:
		name = s.Required[0]
	case len(fields) == 0:
		return map[string]any{}, nil
	default:
		return nil, fmt.Errorf("the question has several fields (%s): answer with a JSON object, e.g. {%q: ...}", strings.Join(fields, ", "), fields[0])
	}
	v, err := fieldValue(name, s.Properties[name], value)
	if err != nil {
		return nil, err
	}
	return map[string]any{name: v}, nil
}

// fieldValue converts text to the type of field name's schema.
func fieldValue(name string, schema any, text string) (any, error) {
	m, _ := schema.(map[string]any)
	typ, _ := m["type"].(string)
	var v any
	switch typ {
	case "number":
		f, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
		if err != nil {
			return nil, fmt.Errorf("field %q wants a number, not %q", name, text)
		}
		v = f
	case "integer":
		i, err := strconv.ParseInt(strings.TrimSpace(text), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("field %q wants an integer, not %q", name, text)
		}
		v = i
	case "boolean":
		switch strings.ToLower(strings.TrimSpace(text)) {
		case "y", "yes", "true", "on", "1":
			v = true
		case "n", "no", "false", "off", "0":
			v = false
		default:
			return nil, fmt.Errorf("field %q wants yes or no, not %q", name, text)
		}
	case "array":
		var items []any
		for _, p := range strings.Split(text, ",") {
			if p = strings.TrimSpace(p); p != "" {
				items = append(items, p)
			}
		}
		return items, nil
	default:
		v = text
	}
	if enum, ok := m["enum"].([]any); ok && len(enum) > 0 {
		for _, e := range enum {
			if fmt.Sprint(e) == fmt.Sprint(v) {
				return v, nil
			}
		}
		names := make([]string, len(enum))
		for i, e := range enum {
			names[i] = fmt.Sprint(e)
		}
		return nil, fmt.Errorf("field %q takes one of %s, not %q", name, strings.Join(names, ", "), text)
	}
	return v, nil
}
