package recalltools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"

	"github.com/adkctx/adkctx/recall"
)

// SessionStore returns the recall.Store of one session on artifacts: the service's own when it
// implements recall.ChunkStore (hooks/dbartifact: chunk by chunk), else each output loaded whole
// once per store. The compactor's history writer takes the same store (glue.Engine.UseRecall).
func SessionStore(artifacts artifact.Service, app, user, session string) recall.Store {
	if cs, ok := artifacts.(recall.ChunkStore); ok {
		return cs.RecallStore(app, user, session)
	}
	return &sessionStore{svc: artifacts, app: app, user: user, session: session, whole: map[string]*wholeOutput{}}
}

// sessionStore is one session's outputs in an artifact service without chunks.
type sessionStore struct {
	svc                artifact.Service
	app, user, session string

	mu    sync.Mutex
	whole map[string]*wholeOutput // name@version → output loaded whole
}

// wholeOutput is an output of a service without chunks, loaded and split once.
type wholeOutput struct {
	lay    *recall.Layout
	chunks [][]byte
}

func (s *sessionStore) Layout(ctx context.Context, name string) (*recall.Layout, error) {
	meta, err := s.svc.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: s.app, UserID: s.user, SessionID: s.session, FileName: name})
	if err != nil {
		return nil, err
	}
	w, err := s.load(ctx, name, meta.ArtifactVersion.Version)
	if err != nil {
		return nil, err
	}
	lay := *w.lay
	lay.Created = createdAt(meta.ArtifactVersion.CreateTime)
	return &lay, nil
}

func (s *sessionStore) ReadChunks(ctx context.Context, name string, version int64, first, count int) ([][]byte, error) {
	w, err := s.load(ctx, name, version)
	if err != nil {
		return nil, err
	}
	if first < 0 || count < 0 || first+count > len(w.chunks) {
		return nil, fmt.Errorf("recalltools: chunks %d+%d of %q: out of range", first, count, name)
	}
	return w.chunks[first : first+count], nil
}

// load loads one version whole and splits it as a chunked store would have.
func (s *sessionStore) load(ctx context.Context, name string, version int64) (*wholeOutput, error) {
	id := fmt.Sprintf("%s@%d", name, version)
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.whole[id]; w != nil {
		return w, nil
	}
	resp, err := s.svc.Load(ctx, &artifact.LoadRequest{AppName: s.app, UserID: s.user, SessionID: s.session, FileName: name, Version: version})
	if err != nil {
		return nil, err
	}
	data, mime := partBytes(resp.Part)
	lay, chunks := recall.Split(data, 0)
	lay.Version, lay.MIMEType = version, mime
	w := &wholeOutput{lay: lay, chunks: chunks}
	s.whole[id] = w
	return w, nil
}

func partBytes(p *genai.Part) ([]byte, string) {
	switch {
	case p == nil:
		return nil, "application/octet-stream"
	case p.InlineData != nil:
		return p.InlineData.Data, p.InlineData.MIMEType
	}
	return []byte(p.Text), "text/plain"
}

func (s *sessionStore) Recent(ctx context.Context, prefix string, skip, limit int) ([]recall.OutputInfo, error) {
	resp, err := s.svc.List(ctx, &artifact.ListRequest{AppName: s.app, UserID: s.user, SessionID: s.session})
	if err != nil {
		return nil, err
	}
	var out []recall.OutputInfo
	for _, name := range resp.FileNames {
		if !strings.HasPrefix(name, prefix) {
			continue // user-scoped ("user:…") names never have recall's prefixes
		}
		meta, err := s.svc.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: s.app, UserID: s.user, SessionID: s.session, FileName: name})
		if err != nil {
			continue // deleted since it was listed
		}
		out = append(out, recall.OutputInfo{Name: name, Created: createdAt(meta.ArtifactVersion.CreateTime)})
	}
	// Newest first; services that record no time (adk-go's in-memory one) fall back to names,
	// which sort history segments by number.
	slices.SortStableFunc(out, func(a, b recall.OutputInfo) int {
		if c := b.Created.Compare(a.Created); c != 0 {
			return c
		}
		return strings.Compare(b.Name, a.Name)
	})
	if skip >= len(out) {
		return nil, nil
	}
	return out[skip:min(len(out), skip+limit)], nil
}

func (s *sessionStore) Save(ctx context.Context, name string, data []byte, mimeType string) (int64, error) {
	resp, err := s.svc.Save(ctx, &artifact.SaveRequest{AppName: s.app, UserID: s.user, SessionID: s.session, FileName: name,
		Part: &genai.Part{InlineData: &genai.Blob{MIMEType: mimeType, Data: data}}})
	if err != nil {
		return 0, err
	}
	return resp.Version, nil
}

func (s *sessionStore) Delete(ctx context.Context, name string, version int64) error {
	return s.svc.Delete(ctx, &artifact.DeleteRequest{AppName: s.app, UserID: s.user, SessionID: s.session, FileName: name, Version: version})
}
