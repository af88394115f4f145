package history

import "testing"

func TestRenderText_LabelsSpeakersAndSkipsReasoning(t *testing.T) {
	entries := []Entry{
		{Message: Message{Role: RoleUser, Parts: []Part{{Type: PartText, Text: "hi\nthere\n\nbye"}}}},
		{Message: Message{Role: RoleAssistant, Parts: []Part{{Type: PartReasoning, Text: "only thinking"}}}},
		{Message: Message{Role: RoleAssistant, Parts: []Part{
			{Type: PartReasoning, Text: "hmm"},
			{Type: PartText, Text: "  reading  "},
			{Type: PartTool, ToolName: "Read\nnotes.txt", State: ToolOutputError},
			{Type: PartTool, State: ToolInputAvailable},
		}}},
		{Message: Message{Role: RoleUser, Source: "continuation", Parts: []Part{{Type: PartText, Text: "go on"}}}},
		{Message: Message{Role: RoleUser, Source: "queued", Parts: []Part{{Type: PartText, Text: "and this"}}}},
		{Message: Message{Role: RoleSystem, Parts: []Part{{Type: PartMarker, Kind: "provider_failure", Severity: "error", Text: "Rate limited."}}}},
		{Message: Message{Role: RoleSystem, Parts: []Part{{Type: PartUnknown, Kind: "hologram", Text: "unknown event hologram"}}}},
	}
	want := "you: hi\n  there\n\n  bye\n" +
		"\n" +
		"agent: reading\n  [tool] Read notes.txt (output-error)\n  [tool] unknown (input-available)\n" +
		"\n" +
		"kandev (continuation): go on\n" +
		"\n" +
		"you: and this\n" +
		"\n" +
		"  ! Rate limited.\n" +
		"\n" +
		"  ? unknown event hologram (written by a newer kandev; kandev events shows it)\n"
	if got := RenderText(entries); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if RenderText(nil) != "" {
		t.Error("no entries should render nothing")
	}
}
