#include "slurm_cluster.h"
#include "ssh_daemon.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QRandomGenerator>
#include <QStandardPaths>
#include <QSysInfo>
#include <QThread>

namespace autocomp::test {

namespace {

void stopProcess(std::unique_ptr<QProcess> &p)
{
    if (!p)
        return;
    p->terminate();
    if (!p->waitForFinished(10000))
        p->kill();
    p->waitForFinished(5000);
    p.reset();
}

} // namespace

SlurmCluster::SlurmCluster() = default;

SlurmCluster::~SlurmCluster()
{
    // Jobs left by a failed test go first, so no job step outlives the cluster.
    if (m_slurmctld) {
        QProcess scancel;
        scancel.start(QStringLiteral("scancel"), {QStringLiteral("--user=root")});
        scancel.waitForFinished(10000);
    }
    stopProcess(m_slurmd);
    stopProcess(m_slurmctld);
    stopProcess(m_munged);
}

QString SlurmCluster::absenceReason()
{
    for (const char *path : {"/usr/sbin/munged", "/usr/sbin/slurmctld", "/usr/sbin/slurmd"})
        if (!QFile::exists(QLatin1String(path)))
            return QStringLiteral("%1 is not installed (Debian's munge, slurmctld, slurmd, slurm-client): "
                                  "packaging/install-deps.sh --test installs them")
                .arg(QLatin1String(path));
    for (const char *tool : {"sbatch", "squeue", "scancel", "scontrol", "sinfo"})
        if (QStandardPaths::findExecutable(QLatin1String(tool)).isEmpty())
            return QStringLiteral("%1 is not installed (slurm-client): packaging/install-deps.sh --test installs it")
                .arg(QLatin1String(tool));
    return {};
}

bool SlurmCluster::start(QString *why)
{
    if (const QString absent = absenceReason(); !absent.isEmpty()) {
        *why = absent;
        return false;
    }
    const QString d = m_dir.path();
    for (const char *sub : {"munge", "state", "spool", "log"})
        QDir(d).mkpath(QLatin1String(sub));
    QFile::setPermissions(d + QStringLiteral("/munge"),
                          QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner | QFile::ExeGroup | QFile::ExeOther);
    QFile key(d + QStringLiteral("/munge/munge.key"));
    key.open(QIODevice::WriteOnly);
    for (int i = 0; i < 256; ++i) {
        const quint32 word = QRandomGenerator::system()->generate();
        key.write(reinterpret_cast<const char *>(&word), sizeof word);
    }
    key.close();
    QFile::setPermissions(key.fileName(), QFile::ReadOwner | QFile::WriteOwner);
    const QString socket = d + QStringLiteral("/munge/sock");
    m_munged = std::make_unique<QProcess>();
    m_munged->setProcessChannelMode(QProcess::ForwardedErrorChannel);
    m_munged->start(QStringLiteral("/usr/sbin/munged"),
                    {QStringLiteral("-F"), QStringLiteral("-f"), QStringLiteral("--socket=") + socket,
                     QStringLiteral("--key-file=") + key.fileName(),
                     QStringLiteral("--pid-file=") + d + QStringLiteral("/munge/pid"),
                     QStringLiteral("--log-file=") + d + QStringLiteral("/munge/log"),
                     QStringLiteral("--seed-file=") + d + QStringLiteral("/munge/seed")});
    QElapsedTimer clock;
    clock.start();
    while (!QFile::exists(socket) && clock.elapsed() < 10000 && m_munged->state() != QProcess::NotRunning)
        QThread::msleep(50);
    if (!QFile::exists(socket)) {
        *why = QStringLiteral("munged did not start (see %1/munge/log)").arg(d);
        return false;
    }
    const QString host = QSysInfo::machineHostName().section(QLatin1Char('.'), 0, 0);
    QFile conf(d + QStringLiteral("/slurm.conf"));
    conf.open(QIODevice::WriteOnly);
    conf.write(
        QStringLiteral("ClusterName=autocomptest\nSlurmctldHost=%1(127.0.0.1)\nSlurmUser=root\nSlurmdUser=root\n"
                       "SlurmctldPort=%2\nSlurmdPort=%3\nAuthType=auth/munge\nAuthInfo=socket=%4\nCredType=cred/munge\n"
                       "StateSaveLocation=%5/state\nSlurmdSpoolDir=%5/spool\nSlurmctldPidFile=%5/"
                       "slurmctld.pid\nSlurmdPidFile=%5/slurmd.pid\n"
                       "SlurmctldLogFile=%5/log/slurmctld.log\nSlurmdLogFile=%5/log/slurmd.log\n"
                       "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSchedulerType=sched/backfill\n"
                       "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nJobCompType=jobcomp/"
                       "filetxt\nJobCompLoc=%5/jobcomp.log\n"
                       "ReturnToService=2\nMpiDefault=none\nKillWait=5\nMinJobAge=600\n"
                       "NodeName=%1 NodeAddr=127.0.0.1 CPUs=%6 State=UNKNOWN\n"
                       "PartitionName=debug Nodes=%1 Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES\n")
            .arg(host)
            .arg(freePort())
            .arg(freePort())
            .arg(socket, d)
            .arg(QThread::idealThreadCount())
            .toUtf8());
    conf.close();
    qputenv("SLURM_CONF", conf.fileName().toLocal8Bit());
    for (auto [process, program] :
         {std::pair{&m_slurmctld, "/usr/sbin/slurmctld"}, std::pair{&m_slurmd, "/usr/sbin/slurmd"}}) {
        *process = std::make_unique<QProcess>();
        (*process)->setProcessChannelMode(QProcess::ForwardedErrorChannel);
        (*process)->start(QLatin1String(program), {QStringLiteral("-D")});
        if (!(*process)->waitForStarted()) {
            *why = QStringLiteral("%1 did not start").arg(QLatin1String(program));
            return false;
        }
    }
    clock.restart();
    while (clock.elapsed() < 60000) {
        QProcess sinfo;
        sinfo.start(QStringLiteral("sinfo"), {QStringLiteral("--noheader"), QStringLiteral("--format=%T")});
        sinfo.waitForFinished(10000);
        if (sinfo.readAllStandardOutput().trimmed() == "idle")
            return true;
        if (m_slurmctld->state() == QProcess::NotRunning || m_slurmd->state() == QProcess::NotRunning)
            break;
        QThread::msleep(200);
    }
    *why = QStringLiteral("the Slurm node did not become idle (see %1/log)").arg(d);
    return false;
}

QStringList SlurmCluster::queue() const
{
    QProcess squeue;
    squeue.start(QStringLiteral("squeue"), {QStringLiteral("--noheader"), QStringLiteral("--format=%i %T %j")});
    squeue.waitForFinished(30000);
    QStringList lines = QString::fromUtf8(squeue.readAllStandardOutput()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    if (squeue.exitCode() != 0)
        lines << QStringLiteral("squeue failed: ") + QString::fromUtf8(squeue.readAllStandardError());
    return lines;
}

QStringList SlurmCluster::completedJobs() const
{
    QFile log(m_dir.filePath(QStringLiteral("jobcomp.log")));
    if (!log.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(log.readAll()).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
}

} // namespace autocomp::test
