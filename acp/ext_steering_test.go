package acp

import (
	"encoding/json"
	"testing"

	sdk "github.com/coder/acp-go-sdk"
)

func TestSteeringAdvertised_ReadsTheInitializeAnswersTopLevelMeta(t *testing.T) {
	with, _ := json.Marshal(sdk.InitializeResponse{Meta: map[string]any{"steering": map[string]any{"supported": true}}})
	off, _ := json.Marshal(sdk.InitializeResponse{Meta: map[string]any{"steering": map[string]any{"supported": false}}})
	inCaps, _ := json.Marshal(sdk.InitializeResponse{AgentCapabilities: sdk.AgentCapabilities{Meta: map[string]any{"steering": map[string]any{"supported": true}}}})
	for _, c := range []struct {
		name string
		caps json.RawMessage
		want bool
	}{
		{"advertised", with, true},
		{"supported false", off, false},
		{"under agentCapabilities is not where agents put it", inCaps, false},
		{"nothing recorded", nil, false},
	} {
		if got := SteeringAdvertised(c.caps); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSteerRequest_IsTheWireShapeTheAdaptersParse(t *testing.T) {
	b, err := json.Marshal(SteerRequest{SessionID: "s1", Prompt: []sdk.ContentBlock{sdk.TextBlock("hi")}, Meta: SteerRequestMeta{Steering: SteerChoices{IdleBehavior: IdlePromptRequired}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"sessionId":"s1","prompt":[{"text":"hi","type":"text"}],"_meta":{"steering":{"idleBehavior":"promptRequired"}}}`
	if string(b) != want {
		t.Fatalf("%s\nwant %s", b, want)
	}
}
