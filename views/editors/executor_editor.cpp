#include "editors/executor_editor.h"

#include <QComboBox>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QTableWidget>
#include <QVBoxLayout>

namespace autocomp {

namespace {

enum HostColumns { HostColumn, UserColumn, PortColumn, SlotsColumn, HostColumnCount };

QLineEdit *lineEdit(const QString &name, const QString &placeholder, const QString &tip)
{
    auto *edit = new QLineEdit;
    edit->setObjectName(name);
    edit->setPlaceholderText(placeholder);
    edit->setToolTip(tip);
    return edit;
}

QSpinBox *spinBox(const QString &name, int min, int max, const QString &tip)
{
    auto *box = new QSpinBox;
    box->setObjectName(name);
    box->setRange(min, max);
    box->setToolTip(tip);
    return box;
}

QString cell(const QTableWidget *table, int row, int column)
{
    const QTableWidgetItem *item = table->item(row, column);
    return item ? item->text().trimmed() : QString();
}

} // namespace

ExecutorEditor::ExecutorEditor(QWidget *parent) : QWidget(parent)
{
    setObjectName(QStringLiteral("executorEditor"));
    m_executor = new QComboBox;
    m_executor->setObjectName(QStringLiteral("executorCombo"));
    m_executor->addItems({QStringLiteral("local"), QStringLiteral("ssh"), QStringLiteral("slurm")});
    m_executor->setToolTip(
        tr("evaluation.executor: this machine, SSH hosts, or Slurm batch jobs; the far side runs `autocomp eval`"));

    m_remoteGroup = new QGroupBox(tr("Remote"));
    m_remoteGroup->setObjectName(QStringLiteral("remoteGroup"));
    m_remoteCommand = lineEdit(QStringLiteral("remoteCommand"), QStringLiteral("autocomp"),
                               tr("evaluation.remote.command: the autocomp CLI on the host or node"));
    m_remoteWorkdir = lineEdit(QStringLiteral("remoteWorkdir"), QStringLiteral("/tmp"),
                               tr("evaluation.remote.workdir (ssh): an absolute directory on the hosts"));
    m_retries = spinBox(
        QStringLiteral("remoteRetries"), 0, 10,
        tr("evaluation.remote.retries: a remote failure (host down, job lost) is retried on another slot this often"));
    m_placement = new QComboBox;
    m_placement->setObjectName(QStringLiteral("placementCombo"));
    m_placement->addItems({QStringLiteral("remote"), QStringLiteral("compile_local"), QStringLiteral("local")});
    m_placement->setToolTip(
        tr("evaluation.placement for the run's target: every step remotely, compile here and run there, or all here"));
    auto *remoteForm = new QFormLayout(m_remoteGroup);
    remoteForm->addRow(tr("Co&mmand:"), m_remoteCommand);
    remoteForm->addRow(tr("&Work directory:"), m_remoteWorkdir);
    remoteForm->addRow(tr("Retr&ies:"), m_retries);
    remoteForm->addRow(tr("Placement of the target:"), m_placement);

    m_sshGroup = new QGroupBox(tr("SSH hosts"));
    m_sshGroup->setObjectName(QStringLiteral("sshGroup"));
    m_hosts = new QTableWidget(0, HostColumnCount);
    m_hosts->setObjectName(QStringLiteral("sshHosts"));
    m_hosts->setHorizontalHeaderLabels({tr("Host"), tr("User"), tr("Port"), tr("Slots")});
    m_hosts->horizontalHeader()->setSectionResizeMode(HostColumn, QHeaderView::Stretch);
    m_hosts->verticalHeader()->hide();
    m_hosts->setToolTip(tr("evaluation.hosts: each host and the evaluations it runs at once (slots)"));
    m_hosts->setMinimumHeight(90);
    auto *add = new QPushButton(tr("Add Host"));
    add->setObjectName(QStringLiteral("addHostButton"));
    auto *remove = new QPushButton(tr("Remove Host"));
    remove->setObjectName(QStringLiteral("removeHostButton"));
    connect(add, &QPushButton::clicked, this, [this] {
        addHostRow(RemoteHost{});
        m_hosts->setCurrentCell(m_hosts->rowCount() - 1, HostColumn);
        m_hosts->editItem(m_hosts->item(m_hosts->rowCount() - 1, HostColumn));
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        if (m_hosts->currentRow() >= 0)
            m_hosts->removeRow(m_hosts->currentRow());
        Q_EMIT changed();
    });
    m_knownHosts = lineEdit(QStringLiteral("sshKnownHosts"), tr("~/.ssh/known_hosts"),
                            tr("evaluation.ssh.known_hosts: host keys are checked strictly against it"));
    m_identity = lineEdit(QStringLiteral("sshIdentity"), tr("the agent's keys"),
                          tr("evaluation.ssh.identity: a key file handed to ssh -i (never read or stored here)"));
    m_connectTimeout = spinBox(QStringLiteral("sshConnectTimeout"), 1, 600, tr("evaluation.ssh.connect_timeout_s"));
    m_connectTimeout->setSuffix(tr(" s"));
    auto *hostButtons = new QHBoxLayout;
    hostButtons->addWidget(add);
    hostButtons->addWidget(remove);
    hostButtons->addStretch(1);
    auto *sshLayout = new QVBoxLayout(m_sshGroup);
    sshLayout->addWidget(m_hosts);
    sshLayout->addLayout(hostButtons);
    auto *sshForm = new QFormLayout;
    sshForm->addRow(tr("&Known hosts:"), m_knownHosts);
    sshForm->addRow(tr("&Identity:"), m_identity);
    sshForm->addRow(tr("Connect &timeout:"), m_connectTimeout);
    sshLayout->addLayout(sshForm);

    m_slurmGroup = new QGroupBox(tr("Slurm"));
    m_slurmGroup->setObjectName(QStringLiteral("slurmGroup"));
    m_partition = lineEdit(QStringLiteral("slurmPartition"), tr("the default partition"),
                           tr("evaluation.slurm.partition (sbatch --partition)"));
    m_gres = lineEdit(QStringLiteral("slurmGres"), tr("none, e.g. gpu:1"), tr("evaluation.slurm.gres (sbatch --gres)"));
    m_time = lineEdit(QStringLiteral("slurmTime"), tr("from the target's step limits"),
                      tr("evaluation.slurm.time (sbatch --time), e.g. 00:30:00"));
    m_mem = lineEdit(QStringLiteral("slurmMem"), tr("the partition's default, e.g. 4G"),
                     tr("evaluation.slurm.mem (sbatch --mem)"));
    m_slurmSlots = spinBox(QStringLiteral("slurmSlots"), 1, 10000,
                           tr("evaluation.slurm.slots: jobs in the queue at once"));
    m_cpus = spinBox(
        QStringLiteral("slurmCpus"), 1, 1024,
        tr("evaluation.slurm.cpus: sbatch --cpus-per-task, and the candidates of a job evaluated at once"));
    m_batch = spinBox(
        QStringLiteral("slurmBatch"), 1, 64,
        tr("evaluation.slurm.batch: up to this many candidates share a job when more wait than slots are free"));
    m_batchWait = spinBox(QStringLiteral("slurmBatchWait"), 0, 600000,
                          tr("evaluation.slurm.batch_wait_ms: how long a free slot waits for a batch to fill"));
    m_batchWait->setSuffix(tr(" ms"));
    m_batchWait->setSingleStep(500);
    m_sharedDir = lineEdit(QStringLiteral("slurmSharedDir"), tr("the cache directory"),
                           tr("evaluation.slurm.shared_dir: an absolute directory the nodes see at the same path"));
    auto *slurmForm = new QFormLayout(m_slurmGroup);
    slurmForm->addRow(tr("&Partition:"), m_partition);
    slurmForm->addRow(tr("&GRES:"), m_gres);
    slurmForm->addRow(tr("T&ime limit:"), m_time);
    slurmForm->addRow(tr("M&emory:"), m_mem);
    slurmForm->addRow(tr("&Jobs at once:"), m_slurmSlots);
    slurmForm->addRow(tr("CP&Us per job:"), m_cpus);
    slurmForm->addRow(tr("Candidates per &job:"), m_batch);
    slurmForm->addRow(tr("Batch wai&t:"), m_batchWait);
    slurmForm->addRow(tr("S&hared directory:"), m_sharedDir);

    auto *top = new QFormLayout;
    top->setContentsMargins(0, 0, 0, 0);
    top->addRow(tr("E&xecutor:"), m_executor);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(top);
    layout->addWidget(m_sshGroup);
    layout->addWidget(m_slurmGroup);
    layout->addWidget(m_remoteGroup);

    connect(m_executor, &QComboBox::currentTextChanged, this, &ExecutorEditor::executorChanged);
    connect(m_placement, &QComboBox::currentTextChanged, this, [this](const QString &where) {
        if (!m_target.isEmpty())
            m_placements.insert(m_target, where);
        Q_EMIT changed();
    });
    connect(m_hosts, &QTableWidget::itemChanged, this, &ExecutorEditor::changed);
    for (QLineEdit *edit :
         {m_knownHosts, m_identity, m_remoteCommand, m_remoteWorkdir, m_partition, m_gres, m_time, m_mem, m_sharedDir})
        connect(edit, &QLineEdit::textChanged, this, &ExecutorEditor::changed);
    for (QSpinBox *box : {m_connectTimeout, m_retries, m_slurmSlots, m_cpus, m_batch, m_batchWait})
        connect(box, &QSpinBox::valueChanged, this, &ExecutorEditor::changed);
    setEvaluation(EvaluationConfig{}, QString());
}

void ExecutorEditor::executorChanged()
{
    const QString executor = m_executor->currentText();
    m_sshGroup->setVisible(executor == QLatin1String("ssh"));
    m_slurmGroup->setVisible(executor == QLatin1String("slurm"));
    m_remoteGroup->setVisible(executor != QLatin1String("local"));
    m_remoteWorkdir->setEnabled(executor == QLatin1String("ssh"));
    Q_EMIT changed();
}

void ExecutorEditor::addHostRow(const RemoteHost &host)
{
    const QSignalBlocker blocker(m_hosts);
    const int row = m_hosts->rowCount();
    m_hosts->insertRow(row);
    m_hosts->setItem(row, HostColumn, new QTableWidgetItem(host.host));
    m_hosts->setItem(row, UserColumn, new QTableWidgetItem(host.user));
    m_hosts->setItem(row, PortColumn, new QTableWidgetItem(QString::number(host.port)));
    m_hosts->setItem(row, SlotsColumn, new QTableWidgetItem(QString::number(host.slots)));
}

void ExecutorEditor::setEvaluation(const EvaluationConfig &c, const QString &target)
{
    {
        const QSignalBlocker blocker(this);
        if (m_executor->findText(c.executor) < 0)
            m_executor->addItem(c.executor); // validate() names it
        m_executor->setCurrentText(c.executor);
        m_hosts->setRowCount(0);
        for (const RemoteHost &host : c.hosts)
            addHostRow(host);
        m_knownHosts->setText(c.sshKnownHosts);
        m_identity->setText(c.sshIdentity);
        m_connectTimeout->setValue(c.sshConnectTimeoutS);
        m_remoteCommand->setText(c.remoteCommand);
        m_remoteWorkdir->setText(c.remoteWorkdir);
        m_retries->setValue(c.remoteRetries);
        m_partition->setText(c.slurmPartition);
        m_gres->setText(c.slurmGres);
        m_time->setText(c.slurmTime);
        m_mem->setText(c.slurmMem);
        m_slurmSlots->setValue(c.slurmSlots);
        m_cpus->setValue(c.slurmCpus);
        m_batch->setValue(c.slurmBatch);
        m_batchWait->setValue(c.slurmBatchWaitMs);
        m_sharedDir->setText(c.slurmSharedDir);
        m_placements = c.placement;
    }
    setTarget(target);
    executorChanged();
}

void ExecutorEditor::setTarget(const QString &target)
{
    m_target = target;
    const QSignalBlocker blocker(m_placement);
    const QString where = m_placements.value(target, QStringLiteral("remote"));
    if (m_placement->findText(where) < 0)
        m_placement->addItem(where); // validate() names it
    m_placement->setCurrentText(where);
}

void ExecutorEditor::apply(EvaluationConfig *c) const
{
    c->executor = m_executor->currentText();
    c->hosts.clear();
    if (c->executor == QLatin1String("ssh")) {
        for (int row = 0; row < m_hosts->rowCount(); ++row) {
            RemoteHost host;
            host.host = cell(m_hosts, row, HostColumn);
            host.user = cell(m_hosts, row, UserColumn);
            host.port = cell(m_hosts, row, PortColumn).toInt();
            host.slots = cell(m_hosts, row, SlotsColumn).toInt();
            c->hosts << host;
        }
    }
    c->sshKnownHosts = m_knownHosts->text().trimmed();
    c->sshIdentity = m_identity->text().trimmed();
    c->sshConnectTimeoutS = m_connectTimeout->value();
    c->remoteCommand = m_remoteCommand->text().trimmed();
    c->remoteWorkdir = m_remoteWorkdir->text().trimmed();
    c->remoteRetries = m_retries->value();
    c->slurmPartition = m_partition->text().trimmed();
    c->slurmGres = m_gres->text().trimmed();
    c->slurmTime = m_time->text().trimmed();
    c->slurmMem = m_mem->text().trimmed();
    c->slurmSlots = m_slurmSlots->value();
    c->slurmCpus = m_cpus->value();
    c->slurmBatch = m_batch->value();
    c->slurmBatchWaitMs = m_batchWait->value();
    c->slurmSharedDir = m_sharedDir->text().trimmed();
    c->placement = m_placements;
}

QStringList ExecutorEditor::errors() const
{
    QStringList out;
    if (m_executor->currentText() != QLatin1String("ssh"))
        return out;
    // What a host row cannot hold as typed; the rest (empty list, ranges) is RunConfig::validate's.
    static const QRegularExpression s_host(QStringLiteral("^[A-Za-z0-9._:\\[\\]-]+$"));
    for (int row = 0; row < m_hosts->rowCount(); ++row) {
        const QString where = QStringLiteral("evaluation.hosts[%1]").arg(row + 1);
        const QString host = cell(m_hosts, row, HostColumn);
        if (!s_host.match(host).hasMatch())
            out << tr("'%1.host' must be a host name or address, got '%2'").arg(where, host);
        bool ok = false;
        const QString port = cell(m_hosts, row, PortColumn);
        const int p = port.toInt(&ok);
        if (!ok || p < 1 || p > 65535)
            out << tr("'%1.port' must be a number between 1 and 65535, got '%2'").arg(where, port);
        const QString slots = cell(m_hosts, row, SlotsColumn);
        const int s = slots.toInt(&ok);
        if (!ok || s < 1 || s > 256)
            out << tr("'%1.slots' must be a number between 1 and 256, got '%2'").arg(where, slots);
    }
    return out;
}

} // namespace autocomp
