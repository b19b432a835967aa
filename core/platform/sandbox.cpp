#include "platform/sandbox.h"

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRegularExpression>
#include <QStandardPaths>

namespace autocomp::Sandbox {

namespace {

struct Probe
{
    bool ok = false;
    QString why;
};

const Probe &probe()
{
    static const Probe s_probe = [] {
        Probe p;
        const QString bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
        if (bwrap.isEmpty()) {
            p.why = QStringLiteral(
                "bubblewrap (bwrap) is not installed; install it (Debian: apt-get install bubblewrap)");
            return p;
        }
        // Namespaces can be forbidden (some containers, a chroot, a kernel without unprivileged user
        // namespaces): try once.
        QProcess process;
        process.setProcessChannelMode(QProcess::MergedChannels);
        process.start(bwrap, prefix(QStringLiteral("/tmp")).mid(1) + QStringList{QStringLiteral("true")});
        if (!process.waitForFinished(5000)) {
            process.kill();
            process.waitForFinished(1000);
            p.why = QStringLiteral("bubblewrap did not start a sandbox within 5 s");
            return p;
        }
        p.ok = process.exitStatus() == QProcess::NormalExit && process.exitCode() == 0;
        if (!p.ok)
            p.why = QStringLiteral(
                        "bubblewrap cannot create namespaces here (%1); on a desktop, allow unprivileged user "
                        "namespaces (kernel.unprivileged_userns_clone=1), in a container run with --privileged "
                        "or a seccomp profile that allows unshare")
                        .arg(QString::fromLocal8Bit(process.readAll()).trimmed().left(300));
        return p;
    }();
    return s_probe;
}

} // namespace

bool available() { return probe().ok; }

QString unavailableReason() { return probe().why; }

QStringList systemPaths()
{
    QStringList paths{QStringLiteral("/usr"), QStringLiteral("/etc/alternatives"), QStringLiteral("/etc/ld.so.cache"),
                      QStringLiteral("/etc/ld.so.conf"), QStringLiteral("/etc/ld.so.conf.d")};
    // On a merged-/usr system /bin, /lib, ... are links into /usr; elsewhere they are directories.
    for (const char *dir : {"/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32"})
        if (QFileInfo(QLatin1String(dir)).exists())
            paths << QLatin1String(dir);
    return paths;
}

QStringList prefix(const QString &writableDir, const QStringList &readOnlyDirs, bool sharePids, bool gpu)
{
    QStringList args{QStringLiteral("bwrap")};
    for (const QString &path : systemPaths()) {
        const QFileInfo info(path);
        if (info.isSymLink())
            args << QStringLiteral("--symlink")
                 << info.symLinkTarget().replace(QRegularExpression(QStringLiteral("^/")), QString()) << path;
        else if (info.exists())
            args << QStringLiteral("--ro-bind") << path << path;
    }
    args << QStringLiteral("--dev") << QStringLiteral("/dev") << QStringLiteral("--proc") << QStringLiteral("/proc")
         << QStringLiteral("--tmpfs") << QStringLiteral("/tmp");
    if (gpu) {
        // The accelerators' device files and nothing else of /dev: NVIDIA's (nvidiactl, nvidia0.., nvidia-uvm,
        // nvidia-caps/), AWS Neuron's (neuron0..), a TPU VM's (accel0.. or vfio/, by generation).
        const QFileInfoList devices = QDir(QStringLiteral("/dev"))
                                          .entryInfoList({QStringLiteral("nvidia*"), QStringLiteral("neuron*"),
                                                          QStringLiteral("accel*"), QStringLiteral("vfio")},
                                                         QDir::AllEntries | QDir::System | QDir::NoDotAndDotDot);
        for (const QFileInfo &device : devices)
            args << QStringLiteral("--dev-bind") << device.absoluteFilePath() << device.absoluteFilePath();
    }
    QStringList seen;
    for (const QString &dir : readOnlyDirs) {
        if (dir.isEmpty() || dir == writableDir || seen.contains(dir) || !QFileInfo::exists(dir))
            continue;
        seen << dir;
        args << QStringLiteral("--ro-bind") << dir << dir;
    }
    if (!writableDir.isEmpty())
        args << QStringLiteral("--bind") << writableDir << writableDir;
    // Run as root, bwrap keeps every capability, and root inside could remount / read-write.
    args << QStringLiteral("--unshare-net") << QStringLiteral("--unshare-ipc") << QStringLiteral("--unshare-uts");
    if (!sharePids)
        args << QStringLiteral("--unshare-pid");
    args << QStringLiteral("--cap-drop") << QStringLiteral("ALL") << QStringLiteral("--die-with-parent")
         << QStringLiteral("--new-session");
    const QString chdir = !writableDir.isEmpty() ? writableDir : readOnlyDirs.value(0, QStringLiteral("/"));
    args << QStringLiteral("--chdir") << chdir;
    return args;
}

QStringList wrap(const QStringList &command, const QString &writableDir, QStringList readOnlyDirs, bool sharePids,
                 bool gpu)
{
    static const QRegularExpression s_path(QStringLiteral("(?:^|=|^-[A-Za-z])(/[^:=\\s]+)"));
    const QString home = QDir::homePath();
    const QStringList system = systemPaths();
    auto covered = [&](const QString &dir) {
        for (const QStringList *list : {&system, const_cast<const QStringList *>(&readOnlyDirs)})
            for (const QString &base : *list)
                if (!base.isEmpty() && (dir == base || dir.startsWith(base + QLatin1Char('/'))))
                    return true;
        return !writableDir.isEmpty() && (dir == writableDir || dir.startsWith(writableDir + QLatin1Char('/')));
    };
    for (const QString &arg : command) {
        for (auto it = s_path.globalMatch(arg); it.hasNext();) {
            const QFileInfo info(it.next().captured(1));
            const QString dir = QDir::cleanPath(info.isDir() ? info.absoluteFilePath() : info.absolutePath());
            if (dir == QLatin1String("/") || dir == home || dir == QDir::tempPath() || !QFileInfo(dir).isDir()
                || covered(dir))
                continue;
            readOnlyDirs << dir;
        }
    }
    const QStringList full = prefix(writableDir, readOnlyDirs, sharePids, gpu);
    // Inside a pid namespace, pid 1 is bwrap's own process, and its /proc/1/cmdline would show every bind
    // of the host's layout. So the options reach bwrap through a pipe (--args 9, which bwrap closes once
    // read) from bash, which then execs bwrap in its own place: /proc/1/cmdline reads
    // "bwrap --args 9 COMMAND...", the command the process sees as its own anyway. Without bash: the plain
    // command line.
    static const QString s_bash = QStandardPaths::findExecutable(QStringLiteral("bash"));
    static const QString s_bwrap = QStandardPaths::findExecutable(QStringLiteral("bwrap"));
    if (s_bash.isEmpty() || s_bwrap.isEmpty())
        return full + command;
    const QStringList options = full.mid(1);
    return QStringList{
               s_bash, QStringLiteral("-c"),
               QStringLiteral("n=$1; shift; exec \"$0\" --args 9 \"${@:n+1}\" 9< <(printf '%s\\0' \"${@:1:n}\")"),
               s_bwrap, QString::number(options.size())}
    + options + command;
}

} // namespace autocomp::Sandbox
