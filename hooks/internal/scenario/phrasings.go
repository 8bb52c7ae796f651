package scenario

import "fmt"

// phrasedRules are the standing rules of Phrasings, by turn: other languages, a style rule, a
// question, a condition; none holds the English words (always, never, don't, must, …) the
// ledger once depended on to keep a rule.
var phrasedRules = map[int]string{
	2:  "Bitte ändere nichts unterhalb von vendor/, auch keine Formatierung.",
	5:  "新しいファイルのコメントは日本語で書いてください。",
	9:  "Las pruebas nuevas van en archivos _test.go junto al código, por favor.",
	13: "Four-space indentation in YAML files, tabs in Go.",
	18: "Could you keep each commit under 200 changed lines from here on?",
	24: "Les messages d'erreur restent en anglais, en minuscules, sans point final.",
	30: "Логи пишем только через zap, без fmt.Println.",
	36: "日志字段名一律用小写蛇形命名。",
	41: "PR 설명에는 변경 이유를 한 줄로 적어 주세요.",
	45: "Whenever a public function changes, the changelog gets a line.",
}

// PhrasingTurns is the length of the Phrasings session: its user text fits
// compaction.UserTextTokens.
const PhrasingTurns = 50

// Phrasings is the session of the instruction-phrasing figure (issue 19): each turn asks about
// one module in a short message, and ten of them state a standing rule in another language or
// phrasing after it.
func Phrasings() Session {
	return Session{
		Message: func(i int) string {
			msg := fmt.Sprintf("[step %d] What does %s do?", i, Path(i))
			if rule, ok := phrasedRules[i]; ok {
				msg += " " + rule
			}
			return msg
		},
		Instructions: phrasedRules,
	}
}
