package release

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The go.sum files of the repository, written by the go command, come out of mergeSums
// unchanged: its order is the go command's, so that a released go.sum differs from the
// repository's only by the lines it adds.
func TestMergeSumsKeepsTheGoCommandsOrder(t *testing.T) {
	repo, err := Open(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range Modules() {
		name := filepath.Join(repo.Root, filepath.FromSlash(m.Dir), "go.sum")
		goSum, err := os.ReadFile(name)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got, err := mergeSums(goSum, nil)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if string(got) != string(goSum) {
			t.Errorf("%s: mergeSums changed it", name)
		}
	}
}

func TestMergeSums(t *testing.T) {
	const goSum = "a.example/m v1.10.0 h1:A\na.example/m v1.10.0/go.mod h1:B\nz.example/m v0.1.0/go.mod h1:C\n"
	for _, tc := range []struct {
		name  string
		lines []string
		want  string // "" when an error is expected
	}{
		{"inserted by path, then by semantic version, go.mod line after the zip's",
			[]string{"a.example/m v1.9.0/go.mod h1:D", "a.example/m v1.9.0 h1:E", "m.example/x v0.1.0 h1:F"},
			"a.example/m v1.9.0 h1:E\na.example/m v1.9.0/go.mod h1:D\na.example/m v1.10.0 h1:A\na.example/m v1.10.0/go.mod h1:B\nm.example/x v0.1.0 h1:F\nz.example/m v0.1.0/go.mod h1:C\n"},
		{"a line already there is kept once", []string{"z.example/m v0.1.0/go.mod h1:C"}, goSum},
		{"another checksum for a module version there", []string{"z.example/m v0.1.0/go.mod h1:X"}, ""},
		{"malformed", []string{"z.example/m v0.1.0"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := mergeSums([]byte(goSum), tc.lines)
			switch {
			case tc.want == "" && err == nil:
				t.Fatalf("no error; got\n%s", got)
			case tc.want != "" && err != nil:
				t.Fatal(err)
			case tc.want != "" && string(got) != tc.want:
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			case tc.want == "" && !strings.Contains(err.Error(), "z.example/m"):
				t.Errorf("the error %q does not name the line", err)
			}
		})
	}
}
