#include "editors/agent_editor.h"

#include "agents/prompt_builder.h"
#include "editors/code_highlighter.h"
#include "models/menu_model.h"
#include "search/search_engine.h"
#include "insights/menu_insights.h"
#include "store/run_store.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QFontDatabase>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QtConcurrent/QtConcurrentRun>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSaveFile>
#include <QStyle>
#include <QTabWidget>
#include <QTableView>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>

#include <random>

namespace autocomp {

namespace {

const QString s_menuFile = QStringLiteral("optimization_menu.yaml");
const QString s_disabledMenuFile = QStringLiteral("optimization_menu.disabled.yaml");

// A YAML double-quoted scalar: JSON string escapes are valid YAML escapes.
QString yamlQuoted(const QString &text)
{
    const QByteArray json = QJsonDocument(QJsonArray{text}).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(json.mid(1, json.size() - 2));
}

QByteArray menuYaml(const QStringList &items)
{
    QString out = QStringLiteral("optimizations:");
    if (items.isEmpty())
        out += QStringLiteral(" []");
    for (const QString &item : items)
        out += QStringLiteral("\n  - strategy: ") + yamlQuoted(item);
    return (out + QLatin1Char('\n')).toUtf8();
}

QByteArray rulesYaml(const QList<QPair<QString, QStringList>> &sections)
{
    QString out;
    for (const auto &[key, rules] : sections) {
        out += key + QLatin1Char(':');
        if (rules.isEmpty())
            out += QStringLiteral(" []");
        for (const QString &rule : rules)
            out += QStringLiteral("\n  - ") + yamlQuoted(rule);
        out += QLatin1Char('\n');
    }
    return out.toUtf8();
}

QStringList lines(const QPlainTextEdit *edit)
{
    QStringList out;
    for (const QString &line : edit->toPlainText().split(QLatin1Char('\n')))
        if (!line.trimmed().isEmpty())
            out << line.trimmed();
    return out;
}

QString readText(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? QString::fromUtf8(file.readAll()) : QString();
}

bool writeFile(const QString &path, const QByteArray &data, QString *error)
{
    QSaveFile file(path);
    if (file.open(QIODevice::WriteOnly) && file.write(data) == data.size() && file.commit())
        return true;
    *error = QObject::tr("%1: cannot write: %2").arg(path, file.errorString());
    return false;
}

bool copyFile(const QString &from, const QString &to, QString *error)
{
    if (QFileInfo(from).canonicalFilePath() == QFileInfo(to).canonicalFilePath())
        return true;
    QFile source(from);
    if (!source.open(QIODevice::ReadOnly)) {
        *error = QObject::tr("%1: cannot read: %2").arg(from, source.errorString());
        return false;
    }
    return writeFile(to, source.readAll(), error);
}

QPlainTextEdit *textEdit(const QString &name, const QString &language)
{
    auto *edit = new QPlainTextEdit;
    edit->setObjectName(name);
    edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    edit->setLineWrapMode(QPlainTextEdit::WidgetWidth);
    CodeHighlighter::attach(edit->document(), language);
    return edit;
}

} // namespace

AgentEditor::AgentEditor(Repository repository, QWidget *parent)
    : QDialog(parent)
    , m_repository(std::move(repository))
    , m_menu(new MenuModel(this))
    , m_validateTimer(new QTimer(this))
{
    setObjectName(QStringLiteral("agentEditor"));
    setWindowTitle(tr("Agent Editor"));
    m_validateTimer->setSingleShot(true);
    m_validateTimer->setInterval(200);
    connect(m_validateTimer, &QTimer::timeout, this, &AgentEditor::validateNow);

    m_agentCombo = new QComboBox;
    m_agentCombo->setObjectName(QStringLiteral("agentCombo"));
    m_agentCombo->addItems(m_repository.agentNames());
    // An agent that fails to load is listed as broken, with the loader's message (file and line).
    for (int i = 0; i < m_agentCombo->count(); ++i) {
        QString error;
        if (!m_repository.agent(m_agentCombo->itemText(i), &error)) {
            m_agentCombo->setItemIcon(i, style()->standardIcon(QStyle::SP_MessageBoxWarning));
            m_agentCombo->setItemData(i, tr("broken: %1").arg(error), Qt::ToolTipRole);
            m_agentCombo->setItemData(i, error, BrokenRole);
        }
    }
    m_sourceLabel = new QLabel;
    m_sourceLabel->setObjectName(QStringLiteral("agentSourceLabel"));
    m_sourceLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_sourceLabel->setWordWrap(true);
    auto *top = new QFormLayout;
    top->addRow(tr("&Agent:"), m_agentCombo);
    top->addRow(tr("Source:"), m_sourceLabel);

    m_architecture = textEdit(QStringLiteral("architectureEdit"), QStringLiteral("markdown"));
    m_isa = textEdit(QStringLiteral("isaEdit"), QStringLiteral("markdown"));
    m_examples = textEdit(QStringLiteral("codeExamplesEdit"), QStringLiteral("markdown"));

    QWidget *menuPage = createMenuPage();

    auto *rulesPage = new QWidget;
    auto *rulesLayout = new QFormLayout(rulesPage);
    m_rulesGeneral = textEdit(QStringLiteral("rulesGeneral"), {});
    m_rulesPlanning = textEdit(QStringLiteral("rulesPlanning"), {});
    m_rulesCoding = textEdit(QStringLiteral("rulesCoding"), {});
    rulesLayout->addRow(new QLabel(tr("One rule per line.")));
    rulesLayout->addRow(tr("&General:"), m_rulesGeneral);
    rulesLayout->addRow(tr("&Planning:"), m_rulesPlanning);
    rulesLayout->addRow(tr("&Coding:"), m_rulesCoding);

    m_tabs = new QTabWidget;
    m_tabs->setObjectName(QStringLiteral("agentTabs"));
    m_tabs->addTab(m_architecture, QStringLiteral("architecture.md"));
    m_tabs->addTab(m_isa, QStringLiteral("isa_docs.md"));
    m_tabs->addTab(menuPage, tr("Optimization menu"));
    m_tabs->addTab(rulesPage, tr("Rules"));
    m_tabs->addTab(m_examples, QStringLiteral("code_examples.md"));
    for (QPlainTextEdit *edit : {m_architecture, m_isa, m_examples, m_rulesGeneral, m_rulesPlanning, m_rulesCoding})
        connect(edit, &QPlainTextEdit::textChanged, this, &AgentEditor::markModified);

    m_validation = new QLabel;
    m_validation->setObjectName(QStringLiteral("agentValidation"));
    m_validation->setWordWrap(true);
    m_validation->setTextFormat(Qt::PlainText);
    m_validation->setStyleSheet(QStringLiteral(
        "QLabel#agentValidation { color: white; background: #b3261e; border-radius: 4px; padding: 6px; }"));
    m_validation->hide();

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    m_saveButton = buttons->addButton(tr("&Save"), QDialogButtonBox::ActionRole);
    m_saveButton->setObjectName(QStringLiteral("saveAgentButton"));
    m_saveButton->setShortcut(QKeySequence::Save);
    m_resetButton = buttons->addButton(tr("&Reset to Shipped"), QDialogButtonBox::ResetRole);
    m_resetButton->setObjectName(QStringLiteral("resetAgentButton"));
    QPushButton *preview = buttons->addButton(tr("&Preview Plan Prompt"), QDialogButtonBox::ActionRole);
    preview->setObjectName(QStringLiteral("previewPromptButton"));
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_saveButton, &QPushButton::clicked, this, [this] {
        QString error;
        if (!save(&error)) {
            m_validation->setText(error);
            m_validation->show();
        }
    });
    connect(m_resetButton, &QPushButton::clicked, this, [this] {
        QString error;
        if (!resetToShipped(&error)) {
            m_validation->setText(error);
            m_validation->show();
        }
    });
    connect(preview, &QPushButton::clicked, this, &AgentEditor::showPreview);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(top);
    layout->addWidget(m_tabs, 1);
    layout->addWidget(m_validation);
    layout->addWidget(buttons);
    resize(900, 700);

    connect(m_agentCombo, &QComboBox::currentTextChanged, this, &AgentEditor::agentSelected);
    if (m_agentCombo->count() > 0)
        agentSelected(m_agentCombo->currentText());
}

// The optimization menu's table with Add, Remove, Move Up and Move Down (Ctrl++, Ctrl+-, Alt+Shift+Up/Down).
QWidget *AgentEditor::createMenuPage()
{
    auto *menuPage = new QWidget;
    auto *menuLayout = new QVBoxLayout(menuPage);
    m_menuView = new QTableView;
    m_menuView->setObjectName(QStringLiteral("menuTable"));
    m_menuView->setModel(m_menu);
    m_menuView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_menuView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_menuView->horizontalHeader()->setStretchLastSection(false);
    m_menuView->horizontalHeader()->setSectionResizeMode(MenuModel::EnabledColumn, QHeaderView::ResizeToContents);
    m_menuView->horizontalHeader()->setSectionResizeMode(MenuModel::TextColumn, QHeaderView::Stretch);
    m_menuView->horizontalHeader()->setSectionResizeMode(MenuModel::RecordColumn, QHeaderView::ResizeToContents);
    m_menuView->setWordWrap(false);
    menuLayout->addWidget(m_menuView, 1);
    auto *menuButtons = new QHBoxLayout;
    const auto menuButton = [&](const QString &name, const QString &text, const QKeySequence &shortcut) {
        auto *b = new QPushButton(text);
        b->setObjectName(name);
        if (!shortcut.isEmpty()) {
            b->setShortcut(shortcut);
            b->setToolTip(shortcut.toString(QKeySequence::NativeText));
        }
        menuButtons->addWidget(b);
        return b;
    };
    QPushButton *add = menuButton(QStringLiteral("addMenuItemButton"), tr("Add"),
                                  QKeySequence(Qt::CTRL | Qt::Key_Plus));
    QPushButton *remove = menuButton(QStringLiteral("removeMenuItemButton"), tr("Remove"),
                                     QKeySequence(Qt::CTRL | Qt::Key_Minus));
    QPushButton *up = menuButton(QStringLiteral("moveMenuItemUpButton"), tr("Move Up"),
                                 QKeySequence(Qt::ALT | Qt::SHIFT | Qt::Key_Up));
    QPushButton *down = menuButton(QStringLiteral("moveMenuItemDownButton"), tr("Move Down"),
                                   QKeySequence(Qt::ALT | Qt::SHIFT | Qt::Key_Down));
    menuButtons->addStretch(1);
    menuLayout->addLayout(menuButtons);
    connect(add, &QPushButton::clicked, this, [this] {
        const int row = m_menu->addItem(tr("new optimization"));
        const QModelIndex index = m_menu->index(row, MenuModel::TextColumn);
        m_menuView->setCurrentIndex(index);
        m_menuView->edit(index);
    });
    connect(remove, &QPushButton::clicked, this, [this] {
        if (const QModelIndex current = m_menuView->currentIndex(); current.isValid())
            m_menu->removeRows(current.row(), 1);
    });
    const auto move = [this](int delta) {
        const QModelIndex current = m_menuView->currentIndex();
        if (current.isValid() && m_menu->moveItem(current.row(), delta))
            m_menuView->setCurrentIndex(m_menu->index(current.row() + delta, current.column()));
    };
    connect(up, &QPushButton::clicked, this, [move] { move(-1); });
    connect(down, &QPushButton::clicked, this, [move] { move(+1); });
    connect(m_menu, &MenuModel::edited, this, &AgentEditor::markModified);
    return menuPage;
}

QString AgentEditor::userAgentDir(const QString &name)
{
    return Repository::userDataDir() + QStringLiteral("/agents/") + name;
}

bool AgentEditor::isUserCopy() const
{
    return !m_sourceDir.isEmpty()
        && QFileInfo(m_sourceDir).canonicalFilePath() == QFileInfo(userAgentDir(m_name)).canonicalFilePath();
}

void AgentEditor::agentSelected(const QString &name)
{
    if (name.isEmpty() || m_loading)
        return;
    QString error;
    if (!loadAgent(name, &error)) {
        m_validation->setText(tr("Agent '%1' is broken and was not loaded:\n%2").arg(name, error));
        m_validation->show();
    }
}

bool AgentEditor::loadAgent(const QString &name, QString *error)
{
    const std::optional<Agent> agent = m_repository.agent(name, error);
    if (!agent)
        return false;
    m_loading = true;
    m_name = name;
    m_sourceDir = agent->dir;
    if (m_agentCombo->currentText() != name) {
        if (m_agentCombo->findText(name) < 0)
            m_agentCombo->addItem(name);
        m_agentCombo->setCurrentText(name);
    }
    m_architecture->setPlainText(agent->architecture);
    m_isa->setPlainText(agent->isaDocs);
    m_examples->setPlainText(readText(m_sourceDir + QStringLiteral("/code_examples.md")));
    m_rulesGeneral->setPlainText(agent->rulesGeneral.join(QLatin1Char('\n')));
    m_rulesPlanning->setPlainText(agent->rulesPlanning.join(QLatin1Char('\n')));
    m_rulesCoding->setPlainText(agent->rulesCoding.join(QLatin1Char('\n')));
    QList<MenuModel::Item> items;
    for (const QString &text : agent->menu)
        items << MenuModel::Item{text, true};
    // Switched-off items live in a side file next to the menu, in the same format.
    const QString disabledPath = m_sourceDir + QLatin1Char('/') + s_disabledMenuFile;
    if (QFileInfo::exists(disabledPath)) {
        QTemporaryDir probe;
        QString ignored;
        if (probe.isValid() && copyFile(disabledPath, probe.filePath(s_menuFile), &ignored)
            && writeFile(probe.filePath(QStringLiteral("agent_config.yaml")), "name: probe\n", &ignored))
            if (const auto disabled = Repository::loadAgent(probe.path(), &ignored))
                for (const QString &text : disabled->menu)
                    items << MenuModel::Item{text, false};
    }
    m_menu->setItems(items);
    m_menuView->resizeColumnToContents(MenuModel::EnabledColumn);
    refreshRecords();
    m_loading = false;
    m_modified = false;
    updateSourceLabel();
    validateNow();
    return true;
}

void AgentEditor::setStorePath(const QString &path)
{
    if (path == m_storePath)
        return;
    m_storePath = path;
    refreshRecords();
}

void AgentEditor::refreshRecords()
{
    const quint64 generation = ++m_recordsGeneration;
    if (m_storePath.isEmpty() || m_name.isEmpty())
        return;
    using Result = std::pair<QHash<QString, StrategyRecord>, int>;
    auto *watcher = new QFutureWatcher<Result>(this);
    connect(watcher, &QFutureWatcher<Result>::finished, this, [this, watcher, generation] {
        const Result result = watcher->result();
        watcher->deleteLater();
        if (generation != m_recordsGeneration)
            return;
        m_menu->setRecords(result.first, result.second);
        m_menuView->resizeColumnToContents(MenuModel::RecordColumn);
        Q_EMIT recordsUpdated();
    });
    // Its own connection, off the GUI thread: the plan prompts of many runs are read.
    watcher->setFuture(QtConcurrent::run([path = m_storePath, agent = m_name]() -> Result {
        RunStore::OpenOptions options;
        options.create = false;
        options.check = false;
        options.allowReadOnly = true;
        QString error;
        const std::unique_ptr<RunStore> store = RunStore::open(path, options, &error);
        if (!store)
            return {};
        const QList<qint64> runs = MenuInsights::runsOfAgent(*store, agent);
        QHash<QString, StrategyRecord> records;
        for (const StrategyRecord &r : MenuInsights::compute(*store, runs, MenuInsights::Grouping::Strategy))
            records.insert(r.strategy, r);
        return {records, int(runs.size())};
    }));
}

void AgentEditor::updateSourceLabel()
{
    const QString dir = QDir::toNativeSeparators(m_sourceDir);
    m_sourceLabel->setText(isUserCopy() ? tr("%1 (your copy; it shadows the shipped agent)").arg(dir)
                                        : tr("%1 (shipped; saving makes your copy)").arg(dir));
    m_resetButton->setEnabled(isUserCopy());
    setWindowTitle(tr("Agent Editor — %1%2").arg(m_name, m_modified ? QStringLiteral(" *") : QString()));
}

void AgentEditor::markModified()
{
    if (m_loading)
        return;
    m_modified = true;
    updateSourceLabel();
    scheduleValidation();
}

void AgentEditor::scheduleValidation() { m_validateTimer->start(); }

bool AgentEditor::writeAgent(const QString &dir, QString *error) const
{
    if (!QDir().mkpath(dir)) {
        *error = tr("%1: cannot create the directory").arg(dir);
        return false;
    }
    const QString target = dir + QLatin1Char('/');
    const QString source = m_sourceDir + QLatin1Char('/');
    // Files the editor does not show travel with the copy unchanged.
    for (const QString &file : {QStringLiteral("agent_config.yaml"), QStringLiteral("translation_menu.yaml")})
        if (QFileInfo::exists(source + file) && !copyFile(source + file, target + file, error))
            return false;
    const QStringList disabled = m_menu->disabledItems();
    if (!writeFile(target + QStringLiteral("architecture.md"), m_architecture->toPlainText().toUtf8(), error)
        || !writeFile(target + QStringLiteral("isa_docs.md"), m_isa->toPlainText().toUtf8(), error)
        || !writeFile(target + s_menuFile, menuYaml(m_menu->enabledItems()), error)
        || !writeFile(target + QStringLiteral("rules.yaml"),
                      rulesYaml({{QStringLiteral("general"), lines(m_rulesGeneral)},
                                 {QStringLiteral("planning"), lines(m_rulesPlanning)},
                                 {QStringLiteral("coding"), lines(m_rulesCoding)}}),
                      error))
        return false;
    if (disabled.isEmpty())
        QFile::remove(target + s_disabledMenuFile);
    else if (!writeFile(target + s_disabledMenuFile, menuYaml(disabled), error))
        return false;
    const QString examples = m_examples->toPlainText();
    if (examples.trimmed().isEmpty())
        QFile::remove(target + QStringLiteral("code_examples.md"));
    else if (!writeFile(target + QStringLiteral("code_examples.md"), examples.toUtf8(), error))
        return false;
    return true;
}

std::optional<Agent> AgentEditor::buildAgent(QString *error) const
{
    QTemporaryDir dir;
    if (!dir.isValid()) {
        *error = tr("cannot create a temporary directory: %1").arg(dir.errorString());
        return std::nullopt;
    }
    const QString agentDir = dir.filePath(m_name);
    if (!writeAgent(agentDir, error))
        return std::nullopt;
    std::optional<Agent> agent = Repository::loadAgent(agentDir, error);
    if (agent) {
        agent->dir = m_sourceDir;
        if (error)
            error->replace(agentDir, m_sourceDir);
    } else if (error) {
        error->replace(agentDir, userAgentDir(m_name));
    }
    return agent;
}

void AgentEditor::validateNow()
{
    m_validateTimer->stop();
    QStringList errors;
    if (m_menu->enabledItems().isEmpty())
        errors << tr("The optimization menu has no enabled item; the planner needs at least one.");
    QStringList seen;
    for (int row = 0; row < m_menu->rowCount(); ++row) {
        const QString text = m_menu->items().at(row).text.trimmed();
        if (text.isEmpty())
            errors << tr("Menu item %1 is empty.").arg(row + 1);
        else if (seen.contains(text))
            errors << tr("Menu item %1 repeats \"%2\".").arg(row + 1).arg(text);
        seen << text;
    }
    if (errors.isEmpty()) {
        QString error;
        if (!buildAgent(&error))
            errors << error;
    }
    m_errors = errors;
    m_validation->setText(errors.join(QLatin1Char('\n')));
    m_validation->setVisible(!errors.isEmpty());
    m_saveButton->setEnabled(errors.isEmpty() && !m_name.isEmpty());
}

bool AgentEditor::save(QString *error)
{
    validateNow();
    if (!m_errors.isEmpty()) {
        *error = m_errors.join(QLatin1Char('\n'));
        return false;
    }
    const QString dir = userAgentDir(m_name);
    if (!writeAgent(dir, error))
        return false;
    m_sourceDir = QFileInfo(dir).absoluteFilePath();
    m_modified = false;
    updateSourceLabel();
    Q_EMIT agentSaved(m_name);
    return true;
}

bool AgentEditor::resetToShipped(QString *error)
{
    const QString dir = userAgentDir(m_name);
    if (QFileInfo::exists(dir) && !QDir(dir).removeRecursively()) {
        *error = tr("%1: cannot remove your copy").arg(dir);
        return false;
    }
    const QString name = m_name;
    if (!loadAgent(name, error))
        return false;
    Q_EMIT agentSaved(name);
    return true;
}

void AgentEditor::setPreviewContext(const Candidate &parent, const RunConfig &config)
{
    m_previewParent = parent;
    m_previewConfig = config;
}

std::optional<QString> AgentEditor::previewPlanPrompt(QString *error) const
{
    const std::optional<Agent> agent = buildAgent(error);
    if (!agent)
        return std::nullopt;
    RunConfig config;
    Candidate parent;
    if (m_previewConfig && m_previewParent) {
        config = *m_previewConfig;
        parent = *m_previewParent;
    } else {
        config.target = agent->target.isEmpty() ? agent->name : agent->target;
        const QStringList problems = m_repository.problemNames(config.target);
        if (problems.isEmpty()) {
            *error = tr("target '%1' has no problems to preview with").arg(config.target);
            return std::nullopt;
        }
        config.problem = problems.first();
    }
    const std::optional<Target> target = m_repository.target(config.target, error);
    if (!target)
        return std::nullopt;
    const std::optional<Problem> problem = m_repository.problem(config.target, config.problem, error);
    if (!problem)
        return std::nullopt;
    if (!m_previewParent) {
        parent.origin = CandidateOrigin::Root;
        parent.status = CandidateStatus::Correct;
        parent.code = problem->startCode();
    }

    // The engine's draw for the first plan of the first parent: seeded from the run's seed and the
    // request's position (iteration, parent index, plan index), then dropout, new-idea and example draws.
    const SearchConfig &s = config.search;
    const int iteration = parent.iteration + 1;
    const bool translation = iteration <= s.translateIters && !agent->translationMenu.isEmpty();
    const QStringList &fullMenu = translation ? agent->translationMenu : agent->menu;
    std::seed_seq seq{quint32(s.seed), quint32(s.seed >> 32), quint32(iteration), quint32(0), quint32(0)};
    std::mt19937_64 rng(seq);
    const QList<int> kept = SearchEngine::dropoutDraw(int(fullMenu.size()), s.menuDropout, rng);
    std::uniform_real_distribution<double> uniform(0.0, 1.0);
    const bool newIdea = uniform(rng) < s.newIdeaProbability;
    QList<CodeExample> examples;
    for (const CodeExample &e : agent->codeExamples)
        if (uniform(rng) < 0.25)
            examples << e;

    PlanPromptInput in;
    in.agent = &*agent;
    in.problem = &*problem;
    in.target = &*target;
    in.parent = &parent;
    for (int index : kept)
        in.menu << MenuEntry{index + 1, fullMenu.at(index)};
    in.inviteNewIdea = newIdea && !translation;
    in.translation = translation;
    in.examples = examples;
    in.iteration = iteration;
    in.iterations = s.iterations;
    return PromptBuilder::planPrompt(in);
}

void AgentEditor::showPreview()
{
    QString error;
    const std::optional<QString> prompt = previewPlanPrompt(&error);
    auto *dialog = new QDialog(this);
    dialog->setObjectName(QStringLiteral("promptPreviewDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowTitle(m_previewParent ? tr("Plan Prompt for a Child of Candidate %1").arg(m_previewParent->id)
                                           : tr("Plan Prompt for the Starting Code"));
    auto *layout = new QVBoxLayout(dialog);
    auto *edit = new QPlainTextEdit(prompt.value_or(error));
    edit->setObjectName(QStringLiteral("promptPreview"));
    edit->setReadOnly(true);
    edit->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    CodeHighlighter::attach(edit->document(), QStringLiteral("markdown"));
    layout->addWidget(edit, 1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close);
    connect(buttons, &QDialogButtonBox::rejected, dialog, &QDialog::close);
    layout->addWidget(buttons);
    dialog->resize(860, 720);
    dialog->show();
}

} // namespace autocomp
