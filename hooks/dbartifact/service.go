package dbartifact

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
	"gorm.io/gorm"
	"gorm.io/gorm/clause"

	"github.com/adkctx/adkctx/glue"
	"github.com/adkctx/adkctx/recall"
)

// Config configures the service NewService returns.
type Config struct {
	// ChunkBytes is the chunk size aimed at (recall.Split). Default 32 KiB, more for outputs
	// over 128 MiB so that none has more than 4096 chunks.
	ChunkBytes int
}

// service is the artifact.Service NewService returns. It also implements recall.ChunkStore and
// Ready, which adkctx's hooks find by interface. It is safe for concurrent use.
type service struct {
	db  *gorm.DB
	cfg Config
}

var (
	_ artifact.Service  = (*service)(nil)
	_ recall.ChunkStore = (*service)(nil)
)

// NewService returns an artifact.Service storing artifacts in db, as adk-go's constructors
// return theirs. Call Migrate once before use. Beside adk-go's methods, the service saves and
// reads outputs in chunks (recall.ChunkStore), and adkctx's hooks ask it at Wire whether its
// tables exist ([NotMigratedError]).
func NewService(db *gorm.DB, cfg Config) artifact.Service {
	return &service{db: db, cfg: cfg}
}

// Migrate creates or updates the service's tables in db.
func Migrate(ctx context.Context, db *gorm.DB) error {
	return db.WithContext(ctx).AutoMigrate(&versionRow{}, &chunkRow{})
}

// NotMigratedError says that the service's tables do not exist in its database: Migrate was
// not run there. hooks' Wire and Check return it, and so does every method whose statement
// fails for that reason.
type NotMigratedError struct {
	Tables []string // the tables missing
	Err    error    // the database's error, when a statement failed (nil before any statement)
}

func (e *NotMigratedError) Error() string {
	msg := fmt.Sprintf("dbartifact: the table(s) %s do not exist: call dbartifact.Migrate(ctx, db) once when the "+
		"application starts, before the service is used", strings.Join(e.Tables, ", "))
	if e.Err != nil {
		msg += " (" + e.Err.Error() + ")"
	}
	return msg
}

func (e *NotMigratedError) Unwrap() error { return e.Err }

// tables are the service's tables.
var tables = []string{versionRow{}.TableName(), chunkRow{}.TableName()}

// Ready reports whether the service can serve: nil when its tables exist, a *NotMigratedError
// when they do not, the error of asking the database otherwise. It reads the database's
// catalog (one query). adkctx's hooks call it at Wire (an interface they look for).
func (s *service) Ready(ctx context.Context) error {
	missing, err := s.missingTables(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("dbartifact: reading the database's tables: %w", err)
	case len(missing) > 0:
		return &NotMigratedError{Tables: missing}
	}
	return nil
}

// missingTables returns the service's tables the database does not hold.
func (s *service) missingTables(ctx context.Context) ([]string, error) {
	have, err := s.db.WithContext(ctx).Migrator().GetTables()
	if err != nil {
		return nil, err
	}
	var missing []string
	for _, t := range tables {
		if !slices.Contains(have, t) {
			missing = append(missing, t)
		}
	}
	return missing, nil
}

// explain returns err, as a *NotMigratedError when the service's tables are missing (the cause
// of a statement's failure that the database reports only as an SQL error). It asks the catalog
// only for a failure, never for a missing artifact.
func (s *service) explain(ctx context.Context, err error) error {
	if err == nil || errors.Is(err, fs.ErrNotExist) || ctx.Err() != nil {
		return err
	}
	if missing, merr := s.missingTables(context.WithoutCancel(ctx)); merr == nil && len(missing) > 0 {
		return &NotMigratedError{Tables: missing, Err: err}
	}
	return err
}

// versionRow is one version of one artifact. SessionID is "" for a user-scoped artifact.
type versionRow struct {
	AppName     string `gorm:"primaryKey"`
	UserID      string `gorm:"primaryKey"`
	SessionID   string `gorm:"primaryKey"`
	FileName    string `gorm:"primaryKey"`
	Version     int64  `gorm:"primaryKey;autoIncrement:false"`
	IsText      bool   // the part was a text part (Part.Text), not inline data
	MIMEType    string
	DisplayName string
	Size        int64
	Layout      []byte // encodeLayout
	// CreatedUnixNano is when the version was saved (integer nanoseconds: ordered and
	// aggregated alike on every database).
	CreatedUnixNano int64
}

func (versionRow) TableName() string { return "adkctx_artifact_versions" }

// chunkRow is one chunk of one version.
type chunkRow struct {
	AppName   string `gorm:"primaryKey"`
	UserID    string `gorm:"primaryKey"`
	SessionID string `gorm:"primaryKey"`
	FileName  string `gorm:"primaryKey"`
	Version   int64  `gorm:"primaryKey;autoIncrement:false"`
	Seq       int    `gorm:"primaryKey;autoIncrement:false"`
	Data      []byte
}

func (chunkRow) TableName() string { return "adkctx_artifact_chunks" }

// key is where an artifact lives: user-scoped names under session "".
type key struct{ app, user, session, name string }

func keyOf(app, user, session, name string) key {
	if strings.HasPrefix(name, "user:") {
		session = ""
	}
	return key{app, user, session, name}
}

func (k key) where(db *gorm.DB) *gorm.DB {
	return db.Where("app_name = ? AND user_id = ? AND session_id = ? AND file_name = ?", k.app, k.user, k.session, k.name)
}

// maxSaveAttempts bounds the retries of a Save whose version another writer claimed first.
const maxSaveAttempts = 16

// Save implements artifact.Service: it stores the part as the next version, in chunks.
func (s *service) Save(ctx context.Context, req *artifact.SaveRequest) (*artifact.SaveResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("request validation failed: %w", err)
	}
	k := keyOf(req.AppName, req.UserID, req.SessionID, req.FileName)
	row := versionRow{AppName: k.app, UserID: k.user, SessionID: k.session, FileName: k.name}
	var data []byte
	if p := req.Part; p.InlineData != nil {
		data, row.MIMEType, row.DisplayName = p.InlineData.Data, p.InlineData.MIMEType, p.InlineData.DisplayName
	} else {
		data, row.IsText, row.MIMEType = []byte(p.Text), true, "text/plain"
	}
	lay, chunks := recall.Split(data, s.cfg.ChunkBytes)
	row.Size, row.Layout = lay.Size, encodeLayout(lay)
	var err error
	for range maxSaveAttempts {
		err = s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
			var latest int64
			if err := k.where(tx.Model(&versionRow{})).Select("COALESCE(MAX(version), 0)").Scan(&latest).Error; err != nil {
				return err
			}
			row.Version, row.CreatedUnixNano = latest+1, time.Now().UnixNano()
			if err := tx.Create(&row).Error; err != nil {
				return errVersionTaken{err}
			}
			rows := make([]chunkRow, len(chunks))
			for i, c := range chunks {
				rows[i] = chunkRow{AppName: k.app, UserID: k.user, SessionID: k.session, FileName: k.name, Version: row.Version, Seq: i, Data: c}
			}
			if len(rows) > 0 {
				return tx.CreateInBatches(rows, 16).Error
			}
			return nil
		})
		if !retryable(err) {
			break
		}
		if busy(err) {
			// SQLite refuses a lock upgrade that would deadlock without waiting (readers of
			// MAX(version) holding shared locks): let the winner commit first.
			select {
			case <-ctx.Done():
				return nil, fmt.Errorf("dbartifact: saving %q: %w", req.FileName, ctx.Err())
			case <-time.After(time.Duration(1+rand.IntN(10)) * time.Millisecond):
			}
		}
	}
	if err != nil {
		return nil, s.explain(ctx, fmt.Errorf("dbartifact: saving %q: %w", req.FileName, err))
	}
	return &artifact.SaveResponse{Version: row.Version}, nil
}

// retryable reports whether a save's transaction failed to another writer of the same name:
// its version row was taken (errVersionTaken), or the store was busy with the other writer
// (SQLite's SQLITE_BUSY, also from the commit); Save then tries again from a fresh read.
func retryable(err error) bool {
	if errors.As(err, &errVersionTaken{}) {
		return true
	}
	return busy(err)
}

// errVersionTaken is an insert of a version row that failed: most likely another writer took
// the version; Save retries.
type errVersionTaken struct{ err error }

func (e errVersionTaken) Error() string { return e.err.Error() }
func (e errVersionTaken) Unwrap() error { return e.err }

// find returns the row of version (0: the newest) of k.
func (s *service) find(ctx context.Context, k key, version int64) (*versionRow, error) {
	var rows []versionRow
	q := k.where(s.db.WithContext(ctx))
	if version > 0 {
		q = q.Where("version = ?", version)
	}
	if err := q.Order("version DESC").Limit(1).Find(&rows).Error; err != nil {
		return nil, s.explain(ctx, fmt.Errorf("dbartifact: reading %q: %w", k.name, err))
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("artifact not found: %w", fs.ErrNotExist)
	}
	return &rows[0], nil
}

// readChunks returns chunks [first, first+count) of version of k (count < 0: all).
func (s *service) readChunks(ctx context.Context, k key, version int64, first, count int) ([][]byte, error) {
	var rows []chunkRow
	q := k.where(s.db.WithContext(ctx)).Where("version = ? AND seq >= ?", version, first)
	if count >= 0 {
		q = q.Where("seq < ?", first+count)
	}
	if err := q.Order("seq").Find(&rows).Error; err != nil {
		return nil, s.explain(ctx, fmt.Errorf("dbartifact: reading %q: %w", k.name, err))
	}
	out := make([][]byte, len(rows))
	for i, r := range rows {
		if r.Seq != first+i {
			return nil, fmt.Errorf("dbartifact: %q version %d: chunk %d missing", k.name, version, first+i)
		}
		out[i] = r.Data
	}
	return out, nil
}

// Load implements artifact.Service.
func (s *service) Load(ctx context.Context, req *artifact.LoadRequest) (*artifact.LoadResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("request validation failed: %w", err)
	}
	k := keyOf(req.AppName, req.UserID, req.SessionID, req.FileName)
	row, err := s.find(ctx, k, req.Version)
	if err != nil {
		return nil, err
	}
	chunks, err := s.readChunks(ctx, k, row.Version, 0, -1)
	if err != nil {
		return nil, err
	}
	data := make([]byte, 0, row.Size)
	for _, c := range chunks {
		data = append(data, c...)
	}
	if int64(len(data)) != row.Size {
		return nil, fmt.Errorf("dbartifact: %q version %d: %d bytes stored, %d recorded", k.name, row.Version, len(data), row.Size)
	}
	if row.IsText {
		return &artifact.LoadResponse{Part: genai.NewPartFromText(string(data))}, nil
	}
	return &artifact.LoadResponse{Part: &genai.Part{InlineData: &genai.Blob{Data: data, MIMEType: row.MIMEType, DisplayName: row.DisplayName}}}, nil
}

// Delete implements artifact.Service: one version, or every version when req.Version is 0.
// Deleting what does not exist is not an error.
func (s *service) Delete(ctx context.Context, req *artifact.DeleteRequest) error {
	if err := req.Validate(); err != nil {
		return fmt.Errorf("request validation failed: %w", err)
	}
	k := keyOf(req.AppName, req.UserID, req.SessionID, req.FileName)
	return s.explain(ctx, s.db.WithContext(ctx).Transaction(func(tx *gorm.DB) error {
		for _, model := range []any{&chunkRow{}, &versionRow{}} {
			q := k.where(tx)
			if req.Version != 0 {
				q = q.Where("version = ?", req.Version)
			}
			if err := q.Delete(model).Error; err != nil {
				return fmt.Errorf("dbartifact: deleting %q: %w", k.name, err)
			}
		}
		return nil
	}))
}

// List implements artifact.Service: the session's artifact names and the user's user-scoped
// ones, sorted.
func (s *service) List(ctx context.Context, req *artifact.ListRequest) (*artifact.ListResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("request validation failed: %w", err)
	}
	var names []string
	err := s.db.WithContext(ctx).Model(&versionRow{}).Distinct("file_name").
		Where("app_name = ? AND user_id = ? AND session_id IN ?", req.AppName, req.UserID, []string{req.SessionID, ""}).
		Order("file_name").Pluck("file_name", &names).Error
	if err != nil {
		return nil, s.explain(ctx, fmt.Errorf("dbartifact: listing: %w", err))
	}
	if names == nil {
		names = []string{}
	}
	return &artifact.ListResponse{FileNames: names}, nil
}

// Versions implements artifact.Service: newest first; an error wrapping fs.ErrNotExist when
// there is none.
func (s *service) Versions(ctx context.Context, req *artifact.VersionsRequest) (*artifact.VersionsResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("request validation failed: %w", err)
	}
	k := keyOf(req.AppName, req.UserID, req.SessionID, req.FileName)
	var versions []int64
	if err := k.where(s.db.WithContext(ctx).Model(&versionRow{})).Order("version DESC").Pluck("version", &versions).Error; err != nil {
		return nil, s.explain(ctx, fmt.Errorf("dbartifact: listing versions of %q: %w", k.name, err))
	}
	if len(versions) == 0 {
		return nil, fmt.Errorf("artifact not found: %w", fs.ErrNotExist)
	}
	return &artifact.VersionsResponse{Versions: versions}, nil
}

// GetArtifactVersion implements artifact.Service: the version's MIME type ("text/plain" for a
// text part) and creation time; CustomMetadata holds "size_bytes".
func (s *service) GetArtifactVersion(ctx context.Context, req *artifact.GetArtifactVersionRequest) (*artifact.GetArtifactVersionResponse, error) {
	if err := req.Validate(); err != nil {
		return nil, fmt.Errorf("request validation failed: %w", err)
	}
	row, err := s.find(ctx, keyOf(req.AppName, req.UserID, req.SessionID, req.FileName), req.Version)
	if err != nil {
		return nil, err
	}
	return &artifact.GetArtifactVersionResponse{ArtifactVersion: &artifact.ArtifactVersion{
		Version:        row.Version,
		MimeType:       row.MIMEType,
		CreateTime:     createTime(time.Unix(0, row.CreatedUnixNano)),
		CustomMetadata: map[string]any{"size_bytes": row.Size},
	}}, nil
}

// RecallStore implements recall.ChunkStore: the saved outputs of one session, read a chunk
// range at a time.
func (s *service) RecallStore(app, user, session string) recall.Store {
	return &sessionOutputs{s: s, app: app, user: user, session: session}
}

// sessionOutputs is one session's artifacts as recall reads and writes them.
type sessionOutputs struct {
	s                  *service
	app, user, session string
}

func (o *sessionOutputs) Layout(ctx context.Context, name string) (*recall.Layout, error) {
	row, err := o.s.find(ctx, keyOf(o.app, o.user, o.session, name), 0)
	if err != nil {
		return nil, err
	}
	lay, err := decodeLayout(row.Layout)
	if err != nil || lay.Size != row.Size {
		return nil, fmt.Errorf("dbartifact: %q version %d: layout does not match the stored size", name, row.Version)
	}
	lay.Version, lay.MIMEType, lay.Created = row.Version, row.MIMEType, time.Unix(0, row.CreatedUnixNano)
	return lay, nil
}

func (o *sessionOutputs) ReadChunks(ctx context.Context, name string, version int64, first, count int) ([][]byte, error) {
	if first < 0 || count <= 0 || version <= 0 {
		return nil, fmt.Errorf("dbartifact: chunks %d+%d of version %d: invalid range", first, count, version)
	}
	return o.s.readChunks(ctx, keyOf(o.app, o.user, o.session, name), version, first, count)
}

// Recent lists the session's own artifacts only (no user-scoped one), by the time of their newest
// version.
func (o *sessionOutputs) Recent(ctx context.Context, prefix string, skip, limit int) ([]recall.OutputInfo, error) {
	var rows []struct {
		FileName string
		Created  int64
	}
	escaped := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix)
	err := o.s.db.WithContext(ctx).Model(&versionRow{}).
		Select("file_name, MAX(created_unix_nano) AS created").
		Where("app_name = ? AND user_id = ? AND session_id = ? AND file_name LIKE ? ESCAPE '\\'", o.app, o.user, o.session, escaped+"%").
		Group("file_name").
		Order(clause.OrderBy{Columns: []clause.OrderByColumn{{Column: clause.Column{Name: "created"}, Desc: true}, {Column: clause.Column{Name: "file_name"}, Desc: true}}}).
		Offset(skip).Limit(limit).Scan(&rows).Error
	if err != nil {
		return nil, o.s.explain(ctx, fmt.Errorf("dbartifact: listing outputs: %w", err))
	}
	out := make([]recall.OutputInfo, len(rows))
	for i, r := range rows {
		out[i] = recall.OutputInfo{Name: r.FileName, Created: time.Unix(0, r.Created)}
	}
	return out, nil
}

func (o *sessionOutputs) Save(ctx context.Context, name string, data []byte, mimeType string) (int64, error) {
	resp, err := o.s.Save(ctx, &artifact.SaveRequest{AppName: o.app, UserID: o.user, SessionID: o.session, FileName: name,
		Part: &genai.Part{InlineData: &genai.Blob{MIMEType: mimeType, Data: data}}})
	if err != nil {
		return 0, err
	}
	return resp.Version, nil
}

func (o *sessionOutputs) Delete(ctx context.Context, name string, version int64) error {
	return o.s.Delete(ctx, &artifact.DeleteRequest{AppName: o.app, UserID: o.user, SessionID: o.session, FileName: name, Version: version})
}

// busy reports whether err says the database was busy with another writer (SQLite's
// SQLITE_BUSY, a serialization failure): worth trying again.
func busy(err error) bool {
	kind, _ := glue.ErrorKind(err)
	return kind == "busy"
}
