#include "dialogs/new_target_wizard.h"

#include "llm/llm_client.h"
#include "catalog/repository.h"
#include "catalog/target_scaffold.h"
#include "store/run_store.h"
#include "common/value_format.h"

#include <QComboBox>
#include <QFileDialog>
#include <QFontDatabase>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QUrl>
#include <QVBoxLayout>

namespace autocomp {

NewTargetWizard::NewTargetWizard(RunStore *store, std::function<QString(const QString &)> keyLookup, QWidget *parent)
    : QWizard(parent)
    , m_store(store)
    , m_client(std::make_unique<LlmClient>())
{
    setObjectName(QStringLiteral("newTargetWizard"));
    setWindowTitle(tr("New Target from Documents"));
    setWizardStyle(QWizard::ClassicStyle);
    if (keyLookup)
        m_client->setApiKeyLookup(std::move(keyLookup));
    setPage(SourcesPage, createSourcesPage());
    setPage(PlanPage, createPlanPage());
    setPage(BuildPage, createBuildPage());
    setButtonText(QWizard::FinishButton, tr("Open in Agent Editor"));
    connect(this, &QWizard::accepted, this, [this] {
        if (m_built)
            Q_EMIT agentBuilt(options().name);
    });
    resize(820, 640);
}

NewTargetWizard::~NewTargetWizard()
{
    m_builder.reset(); // before the client its replies belong to
}

QWizardPage *NewTargetWizard::createSourcesPage()
{
    auto *page = new QWizardPage;
    page->setTitle(tr("Documents"));
    page->setSubTitle(
        tr("The hardware's documentation: folders of text, markdown and HTML, PDFs, and web pages (links under "
           "the address are followed). An LLM turns them into an agent: architecture, ISA, optimization menu, "
           "rules and examples."));
    m_name = new QLineEdit;
    m_name->setObjectName(QStringLiteral("wizardAgentName"));
    m_name->setPlaceholderText(tr("e.g. my-npu"));
    m_sources = new QListWidget;
    m_sources->setObjectName(QStringLiteral("wizardSources"));
    auto *addFolder = new QPushButton(tr("Add Folder…"));
    addFolder->setObjectName(QStringLiteral("wizardAddFolder"));
    auto *addFiles = new QPushButton(tr("Add Files…"));
    addFiles->setObjectName(QStringLiteral("wizardAddFiles"));
    auto *remove = new QPushButton(tr("Remove"));
    remove->setObjectName(QStringLiteral("wizardRemoveSource"));
    m_url = new QLineEdit;
    m_url->setObjectName(QStringLiteral("wizardUrl"));
    m_url->setPlaceholderText(tr("https://vendor.example/docs/isa/"));
    auto *addUrl = new QPushButton(tr("Add Web Pages"));
    addUrl->setObjectName(QStringLiteral("wizardAddUrl"));
    m_scope = new QPlainTextEdit;
    m_scope->setObjectName(QStringLiteral("wizardScope"));
    m_scope->setPlaceholderText(
        tr("What the agent is for, e.g. \"int8 GEMM and convolution kernels\"; documents outside it are left out"));
    m_scope->setMaximumHeight(70);
    m_model = new QComboBox;
    m_model->setObjectName(QStringLiteral("wizardModel"));
    m_model->setEditable(true);
    m_model->addItems({QStringLiteral("anthropic::claude-sonnet-4-5"), QStringLiteral("openai::gpt-5-mini"),
                       QStringLiteral("gcp::gemini-2.5-flash"),
                       QStringLiteral("vllm::Qwen/Qwen2.5-Coder-32B-Instruct")});
    m_target = new QLineEdit;
    m_target->setObjectName(QStringLiteral("wizardTarget"));
    m_target->setPlaceholderText(tr("optional: the target this agent is for"));
    m_scaffold = new QComboBox;
    m_scaffold->setObjectName(QStringLiteral("wizardScaffold"));
    m_scaffold->addItem(tr("No target scaffold"), QString());
    for (const QString &name : Repository().targetNames())
        m_scaffold->addItem(tr("Copy the %1 target's backend.yaml and first problem").arg(name), name);
    m_scaffold->setToolTip(
        tr("A start for the new target's evaluator, named after the target (else the agent), in your data dir"));
    m_sourcesError = new QLabel;
    m_sourcesError->setObjectName(QStringLiteral("wizardSourcesError"));
    m_sourcesError->setWordWrap(true);
    m_sourcesError->setStyleSheet(QStringLiteral("color: #b3261e;"));

    auto *sourceButtons = new QVBoxLayout;
    sourceButtons->addWidget(addFolder);
    sourceButtons->addWidget(addFiles);
    sourceButtons->addWidget(remove);
    sourceButtons->addStretch(1);
    auto *sourceRow = new QHBoxLayout;
    sourceRow->addWidget(m_sources, 1);
    sourceRow->addLayout(sourceButtons);
    auto *urlRow = new QHBoxLayout;
    urlRow->addWidget(m_url, 1);
    urlRow->addWidget(addUrl);
    auto *form = new QFormLayout(page);
    form->addRow(tr("Agent &name:"), m_name);
    form->addRow(tr("Documents:"), sourceRow);
    form->addRow(tr("Web pages:"), urlRow);
    form->addRow(tr("&Scope:"), m_scope);
    form->addRow(tr("&Model:"), m_model);
    form->addRow(tr("&Target:"), m_target);
    form->addRow(tr("S&caffold:"), m_scaffold);
    form->addRow(m_sourcesError);

    connect(addFolder, &QPushButton::clicked, this, [this] {
        const QString dir = QFileDialog::getExistingDirectory(this, tr("Add a Folder of Documents"));
        if (!dir.isEmpty())
            m_sources->addItem(dir);
    });
    connect(addFiles, &QPushButton::clicked, this, [this] {
        const QStringList files = QFileDialog::getOpenFileNames(
            this, tr("Add Documents"), QString(),
            tr("Documents (*.txt *.md *.markdown *.rst *.html *.htm *.pdf);;All files (*)"));
        m_sources->addItems(files);
    });
    connect(remove, &QPushButton::clicked, this, [this] { delete m_sources->currentItem(); });
    connect(addUrl, &QPushButton::clicked, this, [this] {
        const QUrl url(m_url->text().trimmed());
        if (url.isValid() && (url.scheme() == QLatin1String("http") || url.scheme() == QLatin1String("https"))) {
            m_sources->addItem(url.toString());
            m_url->clear();
            m_sourcesError->clear();
        } else {
            m_sourcesError->setText(tr("%1 is not an http(s) address").arg(m_url->text()));
        }
    });
    return page;
}

QWizardPage *NewTargetWizard::createPlanPage()
{
    auto *page = new QWizardPage;
    page->setTitle(tr("Plan and cost"));
    page->setSubTitle(tr("What will be read and what it may cost. Nothing has been sent to the model yet."));
    m_planStatus = new QLabel;
    m_planStatus->setObjectName(QStringLiteral("wizardPlanStatus"));
    m_planStatus->setWordWrap(true);
    m_plan = new QPlainTextEdit;
    m_plan->setObjectName(QStringLiteral("wizardPlan"));
    m_plan->setReadOnly(true);
    m_plan->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_plan->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    auto *layout = new QVBoxLayout(page);
    layout->addWidget(m_planStatus);
    layout->addWidget(m_plan, 1);
    return page;
}

QWizardPage *NewTargetWizard::createBuildPage()
{
    auto *page = new QWizardPage;
    page->setTitle(tr("Build"));
    page->setSubTitle(
        tr("Each answer is stored as it arrives: a cancelled or interrupted build, started again, pays for "
           "nothing twice."));
    m_stage = new QLabel(tr("Not started"));
    m_stage->setObjectName(QStringLiteral("wizardStage"));
    m_progress = new QProgressBar;
    m_progress->setObjectName(QStringLiteral("wizardProgress"));
    m_usage = new QLabel;
    m_usage->setObjectName(QStringLiteral("wizardUsage"));
    m_log = new QPlainTextEdit;
    m_log->setObjectName(QStringLiteral("wizardLog"));
    m_log->setReadOnly(true);
    m_log->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_buildButton = new QPushButton(tr("Build"));
    m_buildButton->setObjectName(QStringLiteral("wizardBuild"));
    m_cancelButton = new QPushButton(tr("Cancel Build"));
    m_cancelButton->setObjectName(QStringLiteral("wizardCancelBuild"));
    m_cancelButton->setEnabled(false);
    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_buildButton);
    buttons->addWidget(m_cancelButton);
    buttons->addStretch(1);
    auto *layout = new QVBoxLayout(page);
    layout->addWidget(m_stage);
    layout->addWidget(m_progress);
    layout->addWidget(m_usage);
    layout->addLayout(buttons);
    layout->addWidget(m_log, 1);
    connect(m_buildButton, &QPushButton::clicked, this, &NewTargetWizard::startBuild);
    connect(m_cancelButton, &QPushButton::clicked, this, &NewTargetWizard::cancelBuild);
    return page;
}

void NewTargetWizard::setSources(const QStringList &sources)
{
    m_sources->clear();
    m_sources->addItems(sources);
}

QStringList NewTargetWizard::sources() const
{
    QStringList out;
    for (int i = 0; i < m_sources->count(); ++i)
        out << m_sources->item(i)->text();
    return out;
}

AgentBuildOptions NewTargetWizard::options() const
{
    AgentBuildOptions o;
    o.name = m_name->text().trimmed();
    o.sources = sources();
    o.scope = m_scope->toPlainText().trimmed();
    o.model = m_model->currentText().trimmed();
    o.target = m_target->text().trimmed();
    return o;
}

QString NewTargetWizard::planText() const { return m_plan->toPlainText(); }

bool NewTargetWizard::validateCurrentPage()
{
    if (currentId() == SourcesPage) {
        AgentBuilder probe(options(), m_client.get(), m_store);
        QString error;
        if (!probe.validate(&error)) {
            m_sourcesError->setText(error);
            return false;
        }
        m_sourcesError->clear();
    }
    if (currentId() == BuildPage && !m_built)
        return false;
    return QWizard::validateCurrentPage();
}

void NewTargetWizard::initializePage(int id)
{
    QWizard::initializePage(id);
    if (id == PlanPage)
        collectPlan();
    if (id == BuildPage) {
        m_built = false;
        m_log->clear();
        m_stage->setText(tr("Ready: %n LLM call(s) at most", nullptr, m_builder ? m_builder->plan().calls() : 0));
        m_progress->setValue(0);
    }
}

void NewTargetWizard::cleanupPage(int id)
{
    if (id == BuildPage && m_builder && m_builder->stage() != AgentBuilder::Stage::Done
        && m_builder->stage() != AgentBuilder::Stage::Failed && m_builder->stage() != AgentBuilder::Stage::Idle)
        m_builder->cancel();
    QWizard::cleanupPage(id);
}

void NewTargetWizard::collectPlan()
{
    m_builder = std::make_unique<AgentBuilder>(options(), m_client.get(), m_store);
    m_plan->clear();
    m_planStatus->setText(tr("Reading the documents…"));
    AgentBuilder *builder = m_builder.get();
    connect(builder, &AgentBuilder::planReady, this, [this, builder] {
        m_plan->setPlainText(builder->plan().describe(options().model));
        m_planStatus->setText(tr("%1 document(s) to read; at most %2 LLM call(s). Press Next to review the build.")
                                  .arg(builder->plan().documents.size())
                                  .arg(builder->plan().calls()));
        Q_EMIT planShown();
    });
    connect(builder, &AgentBuilder::failed, this, [this](const QString &error) {
        if (currentId() == PlanPage)
            m_planStatus->setText(error);
        m_stage->setText(error);
        m_buildButton->setEnabled(true);
        m_buildButton->setText(tr("Build Again"));
        m_cancelButton->setEnabled(false);
        Q_EMIT buildFailed(error);
    });
    connect(builder, &AgentBuilder::stageChanged, this, [this](AgentBuilder::Stage stage, int total) {
        if (stage == AgentBuilder::Stage::Failed || stage == AgentBuilder::Stage::Collecting)
            return;
        m_stage->setText(tr("Stage: %1").arg(AgentBuilder::stageName(stage)));
        m_progress->setRange(0, std::max(1, total));
        m_progress->setValue(stage == AgentBuilder::Stage::Done ? std::max(1, total) : 0);
    });
    connect(builder, &AgentBuilder::progress, this, [this](int done, int total) {
        m_progress->setRange(0, std::max(1, total));
        m_progress->setValue(done);
    });
    connect(builder, &AgentBuilder::usageChanged, this, [this](int sent, int reused, double usd) {
        m_usage->setText(tr("%1 call(s) sent, %2 answered from the store · %3")
                             .arg(sent)
                             .arg(reused)
                             .arg(ValueFormat::dollars(usd)));
    });
    connect(builder, &AgentBuilder::logLine, this, [this](const QString &line) { m_log->appendPlainText(line); });
    connect(builder, &AgentBuilder::finished, this, [this](const QString &dir) {
        if (const QString from = m_scaffold->currentData().toString(); !from.isEmpty()) {
            const QString name = options().target.isEmpty() ? options().name : options().target;
            QString error;
            const QString backend = TargetScaffold::create(Repository(), name, from, &error);
            m_log->appendPlainText(backend.isEmpty() ? tr("target scaffold: %1").arg(error)
                                                     : tr("target scaffold written to %1").arg(backend));
        }
        m_built = true;
        m_stage->setText(tr("Built: %1").arg(dir));
        m_buildButton->setEnabled(false);
        m_cancelButton->setEnabled(false);
        Q_EMIT buildFinished(dir);
        Q_EMIT currentPage()->completeChanged();
    });
    builder->collect();
}

void NewTargetWizard::startBuild()
{
    if (!m_builder)
        return;
    m_buildButton->setEnabled(false);
    m_cancelButton->setEnabled(true);
    m_builder->build();
}

void NewTargetWizard::cancelBuild()
{
    if (m_builder)
        m_builder->cancel();
}

} // namespace autocomp
