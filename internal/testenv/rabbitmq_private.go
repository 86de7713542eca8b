package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	amqp "github.com/rabbitmq/amqp091-go"
)

// PrivateRabbitMQ is a RabbitMQ node of the test's own (Debian's
// rabbitmq-server, as scripts/services runs the shared one), with its own
// node name, epmd, ports, cookie and directories, so that a test may kill,
// pause and restart it while the shared node serves everyone else. It
// keeps its data directory across Restart (durable queues survive); both
// it and its epmd are killed when the test ends.
type PrivateRabbitMQ struct {
	// URI is its AMQP listener on 127.0.0.1 with the default guest user.
	URI string
	// Node is the node's name (rabbit-private-NNNN@localhost).
	Node string
	// TLSURI is its amqps listener on 127.0.0.1 with the guest user, when
	// the node was started with TLS material (PrivateRabbitMQConfig.TLS).
	TLSURI string
	*Proc
	epmd *Proc
}

// PrivateRabbitMQBoot is how long a private node may take to boot: 10-20 s
// on an idle machine, longer when other tests load it.
const PrivateRabbitMQBoot = 60 * time.Second

// rabbitmqSbin holds the scripts that take everything from RABBITMQ_*
// variables (Debian's wrappers in /usr/sbin would switch to the system
// node's cookie and directories).
const rabbitmqSbin = "/usr/lib/rabbitmq/bin"

// PrivateRabbitMQConfig is what a private node adds to its default
// configuration: the zero value is the plain node of StartPrivateRabbitMQ.
type PrivateRabbitMQConfig struct {
	// Plugins are enabled at boot (rabbitmq_auth_mechanism_ssl, ...).
	Plugins []string
	// Conf is appended to rabbitmq.conf (new-style lines).
	Conf string
	// Advanced is the whole advanced.config (Erlang terms); "" is "[].".
	Advanced string
	// Definitions is a definitions document (JSON) the node imports at
	// boot, for users and permissions; the guest user is kept.
	Definitions string
	// TLS, when set, adds an amqps listener presenting its certificate.
	TLS *PrivateRabbitMQTLS
}

// PrivateRabbitMQTLS is a private node's TLS listener: PEM files, copied
// into the node's directory (the node may run as another user).
type PrivateRabbitMQTLS struct {
	CA, Cert, Key string
	// RequireClientCert is verify_peer with fail_if_no_peer_cert: a client
	// must present a certificate signed by CA.
	RequireClientCert bool
}

// StartPrivateRabbitMQ boots a private node and waits until a client can
// open an AMQP connection to it. As root the node runs as the rabbitmq
// user (it refuses directories it does not own), otherwise as the caller.
func StartPrivateRabbitMQ(t testing.TB) *PrivateRabbitMQ {
	t.Helper()
	return StartPrivateRabbitMQWith(t, PrivateRabbitMQConfig{})
}

// StartPrivateRabbitMQWith is StartPrivateRabbitMQ with cfg's additions.
func StartPrivateRabbitMQWith(t testing.TB, cfg PrivateRabbitMQConfig) *PrivateRabbitMQ {
	t.Helper()
	server := filepath.Join(rabbitmqSbin, "rabbitmq-server")
	if _, err := os.Stat(server); err != nil {
		unavailable(t, "rabbitmq", "%s is not installed", server)
	}
	epmdBin := needProgram(t, "rabbitmq", "epmd")
	dir := privateDir(t, "rabbitmq")
	amqpAddr, distAddr, epmdAddr := freeLoopbackAddr(t), freeLoopbackAddr(t), freeLoopbackAddr(t)
	_, amqpPort, _ := net.SplitHostPort(amqpAddr)
	_, distPort, _ := net.SplitHostPort(distAddr)
	_, epmdPort, _ := net.SplitHostPort(epmdAddr)
	node := fmt.Sprintf("rabbit-private-%d@localhost", rand.IntN(1_000_000))
	extra, tlsAddr := privateRabbitMQExtras(t, dir, cfg)
	advanced := cfg.Advanced
	if advanced == "" {
		advanced = "[].\n"
	}
	files := map[string]string{
		"rabbitmq.conf": fmt.Sprintf(`listeners.tcp.default = 127.0.0.1:%s
loopback_users = none
log.console = false
log.file.level = warning
vm_memory_high_watermark.relative = 0.2
disk_free_limit.absolute = 50MB
collect_statistics_interval = 30000
`, amqpPort) + extra,
		"advanced.config":   advanced,
		"rabbitmq-env.conf": "",
		"enabled_plugins":   "[" + strings.Join(cfg.Plugins, ",") + "].\n",
		".erlang.cookie":    fmt.Sprintf("PRIVATE%016d", rand.Int64N(1e16)),
	}
	for name, content := range files {
		mode := os.FileMode(0o644)
		if name == ".erlang.cookie" {
			mode = 0o400
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, sub := range []string{"mnesia", "log"} {
		if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var asUser []string
	if os.Geteuid() == 0 {
		if err := chownTree(dir, "rabbitmq"); err != nil {
			unavailable(t, "rabbitmq", "cannot give %s to the rabbitmq user: %v", dir, err)
		}
		runuser := needProgram(t, "rabbitmq", "runuser")
		asUser = []string{runuser, "-u", "rabbitmq", "--"}
	}
	env := []string{"env", "-i",
		"HOME=" + dir, "LANG=C.UTF-8", "PATH=" + rabbitmqSbin + ":/usr/sbin:/usr/bin:/sbin:/bin",
		"ERL_EPMD_ADDRESS=127.0.0.1", "ERL_EPMD_PORT=" + epmdPort,
	}
	// An epmd of the node's own, in the foreground, so that it dies with
	// the test (the node would otherwise start one that outlives it).
	r := &PrivateRabbitMQ{URI: "amqp://guest:guest@" + amqpAddr + "/", Node: node}
	if tlsAddr != "" {
		r.TLSURI = "amqps://guest:guest@" + tlsAddr + "/"
	}
	r.epmd = startProc(t, "epmd", dir, append(append(append([]string{}, asUser...), env...), epmdBin, "-port", epmdPort, "-address", "127.0.0.1"),
		10*time.Second, func() error { return dialable(epmdAddr) })
	argv := append(append(append([]string{}, asUser...), env...),
		"RABBITMQ_NODENAME="+node,
		"RABBITMQ_NODE_IP_ADDRESS=127.0.0.1",
		"RABBITMQ_NODE_PORT="+amqpPort,
		"RABBITMQ_DIST_PORT="+distPort,
		"RABBITMQ_CONFIG_FILE="+filepath.Join(dir, "rabbitmq.conf"),
		"RABBITMQ_ADVANCED_CONFIG_FILE="+filepath.Join(dir, "advanced.config"),
		"RABBITMQ_CONF_ENV_FILE="+filepath.Join(dir, "rabbitmq-env.conf"),
		"RABBITMQ_ENABLED_PLUGINS_FILE="+filepath.Join(dir, "enabled_plugins"),
		"RABBITMQ_MNESIA_BASE="+filepath.Join(dir, "mnesia"),
		"RABBITMQ_LOG_BASE="+filepath.Join(dir, "log"),
		"RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS=-kernel inet_dist_use_interface {127,0,0,1}",
		server)
	r.Proc = startProc(t, "rabbitmq-server", dir, argv, PrivateRabbitMQBoot, func() error {
		// Ready when a client gets through the AMQP handshake: the
		// listener opens late in the boot.
		if err := dialable(amqpAddr); err != nil {
			return err
		}
		c, err := amqp.DialConfig(r.URI, amqp.Config{Dial: amqp.DefaultDial(2 * time.Second)})
		if err != nil {
			return err
		}
		return c.Close()
	})
	return r
}

// Restart kills the node (if it runs) and boots it again on the same
// ports and data directory, within PrivateRabbitMQBoot.
func (r *PrivateRabbitMQ) Restart(t testing.TB) {
	t.Helper()
	r.Proc.Restart(t, PrivateRabbitMQBoot)
}

// privateRabbitMQExtras writes cfg's files into dir and returns the lines
// they add to rabbitmq.conf, and the TLS listener's address ("" without).
func privateRabbitMQExtras(t testing.TB, dir string, cfg PrivateRabbitMQConfig) (conf, tlsAddr string) {
	t.Helper()
	var b strings.Builder
	if cfg.TLS != nil {
		tlsAddr = freeLoopbackAddr(t)
		_, port, _ := net.SplitHostPort(tlsAddr)
		fmt.Fprintf(&b, "listeners.ssl.default = 127.0.0.1:%s\n", port)
		for _, f := range []struct{ key, src, name string }{
			{"cacertfile", cfg.TLS.CA, "tls-ca.pem"}, {"certfile", cfg.TLS.Cert, "tls-cert.pem"}, {"keyfile", cfg.TLS.Key, "tls-key.pem"},
		} {
			data, err := os.ReadFile(f.src)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, f.name), data, 0o600); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&b, "ssl_options.%s = %s\n", f.key, filepath.Join(dir, f.name))
		}
		if cfg.TLS.RequireClientCert {
			b.WriteString("ssl_options.verify = verify_peer\nssl_options.fail_if_no_peer_cert = true\n")
		}
	}
	if cfg.Definitions != "" {
		path := filepath.Join(dir, "definitions.json")
		if err := os.WriteFile(path, []byte(cfg.Definitions), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "load_definitions = %s\n", path)
	}
	b.WriteString(cfg.Conf)
	if cfg.Conf != "" && !strings.HasSuffix(cfg.Conf, "\n") {
		b.WriteString("\n")
	}
	return b.String(), tlsAddr
}

func dialable(addr string) error {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return err
	}
	return c.Close()
}

// chownTree gives dir and everything in it to the named user.
func chownTree(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return err
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(dir, func(path string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(path, uid, gid)
	})
}

// Reboot is Restart returning the error, for a fault injected from a
// goroutine of the test's (where t.Fatal may not be called).
func (r *PrivateRabbitMQ) Reboot() error {
	r.Proc.Kill()
	return r.Proc.start(PrivateRabbitMQBoot)
}
