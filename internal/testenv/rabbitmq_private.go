package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
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

// StartPrivateRabbitMQ boots a private node and waits until a client can
// open an AMQP connection to it. As root the node runs as the rabbitmq
// user (it refuses directories it does not own), otherwise as the caller.
func StartPrivateRabbitMQ(t testing.TB) *PrivateRabbitMQ {
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
	files := map[string]string{
		"rabbitmq.conf": fmt.Sprintf(`listeners.tcp.default = 127.0.0.1:%s
loopback_users = none
log.console = false
log.file.level = warning
vm_memory_high_watermark.relative = 0.2
disk_free_limit.absolute = 50MB
collect_statistics_interval = 30000
`, amqpPort),
		"advanced.config":   "[].\n",
		"rabbitmq-env.conf": "",
		"enabled_plugins":   "[].\n",
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
