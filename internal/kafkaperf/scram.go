package kafkaperf

import (
	"crypto/hmac"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

type hashFunc func() hash.Hash

var (
	sha256Hash hashFunc = sha256.New
	sha512Hash hashFunc = sha512.New
)

// scramClient is the client side of SCRAM (RFC 5802) for sarama's
// SCRAM-SHA-256/512 SASL mechanisms.
type scramClient struct {
	h              hashFunc
	user, pass     string
	nonce          string
	clientFirst    string
	serverSig      []byte
	step           int
	done           bool
	nonceGenerator func() string
}

func newSCRAMClient(h hashFunc) *scramClient {
	return &scramClient{h: h, nonceGenerator: func() string {
		b := make([]byte, 24)
		_, _ = rand.Read(b)
		return base64.RawStdEncoding.EncodeToString(b)
	}}
}

func (c *scramClient) Begin(user, pass, _ string) error {
	c.user, c.pass, c.step, c.done = user, pass, 0, false
	return nil
}

func saslName(s string) string {
	return strings.NewReplacer("=", "=3D", ",", "=2C").Replace(s)
}

func (c *scramClient) Step(challenge string) (string, error) {
	defer func() { c.step++ }()
	switch c.step {
	case 0:
		c.nonce = c.nonceGenerator()
		c.clientFirst = "n=" + saslName(c.user) + ",r=" + c.nonce
		return "n,," + c.clientFirst, nil
	case 1:
		attrs := parseSCRAM(challenge)
		nonce, salt64, iters := attrs["r"], attrs["s"], attrs["i"]
		if !strings.HasPrefix(nonce, c.nonce) {
			return "", errors.New("SCRAM: server nonce does not extend the client nonce")
		}
		salt, err := base64.StdEncoding.DecodeString(salt64)
		if err != nil {
			return "", fmt.Errorf("SCRAM: bad salt: %w", err)
		}
		n, err := strconv.Atoi(iters)
		if err != nil || n <= 0 {
			return "", errors.New("SCRAM: bad iteration count")
		}
		salted, err := pbkdf2.Key(c.h, c.pass, salt, n, c.h().Size())
		if err != nil {
			return "", err
		}
		clientKey := c.hmac(salted, "Client Key")
		stored := c.h()
		stored.Write(clientKey)
		finalNoProof := "c=biws,r=" + nonce
		authMessage := c.clientFirst + "," + challenge + "," + finalNoProof
		sig := c.hmac(stored.Sum(nil), authMessage)
		proof := make([]byte, len(clientKey))
		for i := range clientKey {
			proof[i] = clientKey[i] ^ sig[i]
		}
		c.serverSig = c.hmac(c.hmac(salted, "Server Key"), authMessage)
		return finalNoProof + ",p=" + base64.StdEncoding.EncodeToString(proof), nil
	case 2:
		attrs := parseSCRAM(challenge)
		if e, ok := attrs["e"]; ok {
			return "", fmt.Errorf("SCRAM: server error: %s", e)
		}
		v, err := base64.StdEncoding.DecodeString(attrs["v"])
		if err != nil || !hmac.Equal(v, c.serverSig) {
			return "", errors.New("SCRAM: server signature does not match")
		}
		c.done = true
		return "", nil
	}
	return "", errors.New("SCRAM: unexpected extra step")
}

func (c *scramClient) Done() bool { return c.done }

func (c *scramClient) hmac(key []byte, msg string) []byte {
	m := hmac.New(c.h, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}

func parseSCRAM(s string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		if len(part) >= 2 && part[1] == '=' {
			out[part[:1]] = part[2:]
		}
	}
	return out
}
