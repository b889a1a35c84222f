package crds

// AdmitWithoutMemo is Admit with the CEL validator and the schema validator run directly,
// without celMemo and schemaMemo. Not safe beside other admissions.
func AdmitWithoutMemo(s *Set, js []byte) (Verdict, error) {
	noCELMemo, noSchemaMemo = true, true
	defer func() { noCELMemo, noSchemaMemo = false, false }()
	return s.Admit(js)
}

// AdmitWithoutSchemaMemo is Admit with the schema validator run directly, without
// schemaMemo (celMemo as usual). Not safe beside other admissions.
func AdmitWithoutSchemaMemo(s *Set, js []byte) (Verdict, error) {
	noSchemaMemo = true
	defer func() { noSchemaMemo = false }()
	return s.Admit(js)
}

// SchemaMemoHits is how many schema answers were taken from memory so far.
func SchemaMemoHits() int64 { return schemaMemoHits.Load() }
