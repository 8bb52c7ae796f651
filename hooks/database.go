package hooks

import (
	"reflect"
	"unsafe"

	"google.golang.org/adk/session"
	"gorm.io/gorm"
)

// gormOf returns the *gorm.DB of adk-go's database session service (session/database), nil for
// any other service. The service keeps it in an unexported field and offers no accessor, so it
// is read by reflection, and only when the package, the type and the field's type are the ones
// of the adk-go this module is built with: where a later adk-go changed them, the answer is nil
// (the index is not checked), never a wrong handle. TestSessionIndexWarning pins it.
func gormOf(svc session.Service) *gorm.DB {
	v := reflect.ValueOf(svc)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	t := v.Type().Elem()
	if t.Kind() != reflect.Struct || t.PkgPath() != databasePackage || t.Name() != "databaseService" {
		return nil
	}
	f, ok := t.FieldByName("db")
	if !ok || f.Type != reflect.TypeFor[*gorm.DB]() {
		return nil
	}
	field := v.Elem().FieldByIndex(f.Index)
	db, _ := reflect.NewAt(f.Type, unsafe.Pointer(field.UnsafeAddr())).Elem().Interface().(*gorm.DB)
	return db
}
