package redisbench

import "testing"

func TestNumericHost(t *testing.T) {
	for _, tt := range []struct {
		host, want string // want "" means a name, for the resolver
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"127.1", "127.0.0.1"},
		{"127.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F000001", "127.0.0.1"},
		{"0177.0.0.1", "127.0.0.1"},
		{"0x7f.1", "127.0.0.1"},
		{"10.65535", "10.0.255.255"},
		{"::1", "::1"},
		{"::ffff:127.0.0.1", "127.0.0.1"},
		{"", ""},
		{"localhost", ""},
		{"127.0.0.1.", ""},
		{"127.0.0.256", ""},
		{"256.0.0.1", ""},
		{"1.2.3.4.5", ""},
		{"08.0.0.1", ""},
		{"4294967296", ""},
		{"+1", ""},
		{"127.0.0.1 ", ""},
		{"1..1", ""},
		{"[::1]", ""},
		{"::1%lo", ""},
	} {
		ip, ok := numericHost(tt.host)
		got := ""
		if ok {
			got = ip.String()
		}
		if got != tt.want {
			t.Errorf("numericHost(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}

func FuzzNumericHost(f *testing.F) {
	for _, s := range []string{"127.1", "0x7f000001", "::1", "1.2.3.4", "0", "00000000000000000000001"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ip, ok := numericHost(s)
		if ok && ip == nil {
			t.Fatalf("%q: numeric but no address", s)
		}
		if ok && ip.To4() != nil {
			if again, ok2 := numericHost(ip.String()); !ok2 || !again.Equal(ip) {
				t.Fatalf("%q -> %s does not read back", s, ip)
			}
		}
	})
}
