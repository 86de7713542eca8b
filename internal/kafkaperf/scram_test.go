package kafkaperf

import "testing"

// TestSCRAMSHA256Vector runs the exchange of RFC 7677 section 3.
func TestSCRAMSHA256Vector(t *testing.T) {
	c := newSCRAMClient(sha256Hash)
	c.nonceGenerator = func() string { return "rOprNGfwEbeRWgbNEkqO" }
	if err := c.Begin("user", "pencil", ""); err != nil {
		t.Fatal(err)
	}
	first, err := c.Step("")
	if err != nil || first != "n,,n=user,r=rOprNGfwEbeRWgbNEkqO" {
		t.Fatalf("client-first = %q, %v", first, err)
	}
	final, err := c.Step("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
	want := "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
	if err != nil || final != want {
		t.Fatalf("client-final = %q, %v\nwant %q", final, err, want)
	}
	if _, err := c.Step("v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="); err != nil || !c.Done() {
		t.Fatalf("server-final rejected: %v", err)
	}
}

func TestSCRAMRejectsBadServerSignature(t *testing.T) {
	c := newSCRAMClient(sha256Hash)
	c.nonceGenerator = func() string { return "rOprNGfwEbeRWgbNEkqO" }
	_ = c.Begin("user", "pencil", "")
	_, _ = c.Step("")
	_, _ = c.Step("r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
	if _, err := c.Step("v=AAAA"); err == nil {
		t.Error("a wrong server signature must fail")
	}
}
