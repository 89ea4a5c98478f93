package top

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
)

type keyMap struct {
	Up, Down, Tab, Enter, Back, Sort, Filter, Pause, Help, Quit, Prev, Next, Tree key.Binding
}

func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Tab, k.Enter, k.Sort, k.Filter, k.Pause, k.Help, k.Quit}
}

func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Tab, k.Enter, k.Back}, {k.Sort, k.Filter, k.Tree, k.Pause, k.Prev, k.Next}, {k.Help, k.Quit}}
}

var keys = keyMap{
	Up:     key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
	Down:   key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
	Tab:    key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "topics/nodes/services/paths")),
	Enter:  key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "focus")),
	Tree:   key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "namespace tree (enter opens one)")),
	Back:   key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back")),
	Sort:   key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sort")),
	Filter: key.NewBinding(key.WithKeys("/"), key.WithHelp("/", "filter")),
	Pause:  key.NewBinding(key.WithKeys("p", " "), key.WithHelp("p", "pause")),
	Help:   key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
	Quit:   key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	Prev:   key.NewBinding(key.WithKeys("left", "h"), key.WithHelp("←", "older (log, paused)")),
	Next:   key.NewBinding(key.WithKeys("right", "l"), key.WithHelp("→", "newer (log, paused)")),
}

// Init starts nothing: frames arrive from the source.
func (m Model) Init() tea.Cmd { return nil }

// Update handles frames, keys and resizes.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.help.Width = msg.Width
	case FrameMsg:
		m.addFrame(Frame(msg))
	case EndMsg:
		m.ended = "source ended"
		if msg.Err != nil {
			m.ended = msg.Err.Error()
		}
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m Model) key(msg tea.KeyMsg) (tea.Model, tea.Cmd) {
	if msg.Type == tea.KeyRunes && len(msg.Runes) > 1 && !msg.Paste {
		// Keys typed faster than the terminal is read arrive as one message:
		// take them one at a time, so "/imu" is the filter key and a query.
		var cmds []tea.Cmd
		var next tea.Model = m
		for _, r := range msg.Runes {
			var cmd tea.Cmd
			next, cmd = next.(Model).key(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{r}, Alt: msg.Alt})
			cmds = append(cmds, cmd)
		}
		return next, tea.Batch(cmds...)
	}
	if m.filtering {
		switch msg.String() {
		case "enter":
			m.filtering = false
			m.filter.Blur()
		case "esc":
			m.filtering = false
			m.filter.Blur()
			m.filter.SetValue("")
		default:
			var cmd tea.Cmd
			m.filter, cmd = m.filter.Update(msg)
			m.rebuild()
			return m, cmd
		}
		m.rebuild()
		return m, nil
	}
	switch {
	case key.Matches(msg, keys.Quit):
		return m, tea.Quit
	case key.Matches(msg, keys.Help):
		m.showHelp = !m.showHelp
	case key.Matches(msg, keys.Back):
		switch {
		case m.showHelp:
			m.showHelp = false
		case m.focus != "":
			m.focus = ""
		case m.filter.Value() != "":
			m.filter.SetValue("")
			m.rebuild()
		}
	case key.Matches(msg, keys.Filter):
		m.filtering = true
		return m, m.filter.Focus()
	case key.Matches(msg, keys.Tab): // the services and paths panes only when they have rows
		m.pane = (m.pane + 1) % panes
		if m.pane == paneServices && len(m.services) == 0 {
			m.pane = panePaths
		}
		if m.pane == panePaths && len(m.paths) == 0 {
			m.pane = paneTopics
		}
	case key.Matches(msg, keys.Up):
		m.cursor[m.pane] = max(0, m.cursor[m.pane]-1)
	case key.Matches(msg, keys.Down):
		m.cursor[m.pane] = clamp(m.cursor[m.pane]+1, 0, m.rows()-1)
	case key.Matches(msg, keys.Sort):
		names := [panes][]string{sortTopicNames, sortNodeNames, sortServiceNames, sortPathNames}[m.pane]
		m.sortBy[m.pane] = (m.sortBy[m.pane] + 1) % len(names)
		m.rebuild()
	case key.Matches(msg, keys.Pause):
		m.paused = !m.paused
		if !m.paused {
			if !m.Replay && m.latest.W != nil {
				m.frames = []Frame{m.latest}
			}
			m.shown = len(m.frames) - 1
			m.rebuild()
		}
	case key.Matches(msg, keys.Tree):
		m.tree, m.treeChosen = !m.tree, true
		m.rebuild()
	case key.Matches(msg, keys.Enter):
		if ns := m.groupAt(m.pane, m.cursor[m.pane]); ns != "" {
			m.opened[ns] = !m.opened[ns]
			m.rebuild()
		} else if m.pane == paneTopics && m.cursor[0] < len(m.topics) {
			m.focus = "topic:" + m.topics[m.cursor[0]].name
		} else if m.pane == paneNodes && m.cursor[1] < len(m.nodes) {
			n := m.nodes[m.cursor[1]]
			m.focus = fmt.Sprintf("node:%s@%d", n.name, n.pid)
		} else if m.pane == paneServices && m.cursor[paneServices] < len(m.services) {
			m.focus = "service:" + m.services[m.cursor[paneServices]].name
		} else if m.pane == panePaths && m.cursor[panePaths] < len(m.paths) {
			m.focus = "path:" + m.paths[m.cursor[panePaths]].name
		}
	case key.Matches(msg, keys.Prev), key.Matches(msg, keys.Next):
		if m.Replay && m.paused {
			step := 1
			if key.Matches(msg, keys.Prev) {
				step = -1
			}
			m.shown = clamp(m.shown+step, 0, len(m.frames)-1)
			m.rebuild()
		}
	}
	return m, nil
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return max(lo, min(v, hi))
}
