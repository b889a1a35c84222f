package crds

// AdmitWithoutMemo is Admit with the CEL validator run directly, without celMemo. Not safe
// beside other admissions.
func AdmitWithoutMemo(s *Set, js []byte) (Verdict, error) {
	noCELMemo = true
	defer func() { noCELMemo = false }()
	return s.Admit(js)
}
