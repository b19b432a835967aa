#include "new_run_dialog.h"

#include "executor_editor.h"

#include "search/run_setup.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFile>
#include <QFileDialog>
#include <QFormLayout>
#include <QGroupBox>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QListWidget>
#include <QPushButton>
#include <QSaveFile>
#include <QSpinBox>
#include <QTimer>
#include <QVBoxLayout>

namespace autocomp {

namespace {

QStringList itemsOf(const QListWidget *list)
{
    QStringList out;
    for (int i = 0; i < list->count(); ++i)
        if (const QString text = list->item(i)->text().trimmed(); !text.isEmpty())
            out << text;
    return out;
}

void setItems(QListWidget *list, const QStringList &items)
{
    list->clear();
    for (const QString &text : items) {
        auto *item = new QListWidgetItem(text, list);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
    }
}

QSpinBox *spinBox(const QString &name, int min, int max)
{
    auto *box = new QSpinBox;
    box->setObjectName(name);
    box->setRange(min, max);
    return box;
}

} // namespace

NewRunDialog::NewRunDialog(Repository repository, QString storePath, QWidget *parent)
    : QDialog(parent)
    , m_repository(std::move(repository))
    , m_storePath(std::move(storePath))
    , m_validateTimer(new QTimer(this))
{
    setObjectName(QStringLiteral("newRunDialog"));
    setWindowTitle(tr("New Run"));
    m_validateTimer->setSingleShot(true);
    m_validateTimer->setInterval(120);
    connect(m_validateTimer, &QTimer::timeout, this, &NewRunDialog::validateNow);

    m_target = new QComboBox;
    m_target->setObjectName(QStringLiteral("targetCombo"));
    m_target->addItems(m_repository.targetNames());
    m_targetState = new QLabel;
    m_targetState->setObjectName(QStringLiteral("targetState"));
    m_targetState->setWordWrap(true);
    m_targetState->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // Each target's state in its tooltip, so an absent one is seen before it is picked.
    for (int i = 0; i < m_target->count(); ++i) {
        QString error;
        if (const auto t = m_repository.target(m_target->itemText(i), &error))
            m_target->setItemData(i, t->available() ? tr("available: %1").arg(t->description) : t->absenceReason(), Qt::ToolTipRole);
        else
            m_target->setItemData(i, tr("invalid: %1").arg(error), Qt::ToolTipRole);
    }
    m_problem = new QComboBox;
    m_problem->setObjectName(QStringLiteral("problemCombo"));
    m_agent = new QComboBox;
    m_agent->setObjectName(QStringLiteral("agentCombo"));
    m_agent->addItems(m_repository.agentNames());

    m_beamWidth = spinBox(QStringLiteral("beamWidth"), 1, 64);
    m_plansPerParent = spinBox(QStringLiteral("plansPerParent"), 1, 64);
    m_codePerPlan = spinBox(QStringLiteral("codePerPlan"), 1, 64);
    m_iterations = spinBox(QStringLiteral("iterations"), 1, 1000);
    m_dropout = new QDoubleSpinBox;
    m_dropout->setObjectName(QStringLiteral("menuDropout"));
    m_dropout->setRange(0, 1);
    m_dropout->setSingleStep(0.05);
    m_dropout->setToolTip(tr("Probability that a menu item is left out of one plan prompt"));
    m_fixAttempts = spinBox(QStringLiteral("fixAttempts"), 0, 10);
    m_editMode = new QCheckBox(tr("Search/replace edits instead of whole files"));
    m_editMode->setObjectName(QStringLiteral("editMode"));
    m_feedback = new QCheckBox(tr("Give the planner the evaluator's hardware feedback"));
    m_feedback->setObjectName(QStringLiteral("feedback"));
    m_feedback->setChecked(true);
    m_translateIters = spinBox(QStringLiteral("translateIters"), 0, 100);
    m_seed = spinBox(QStringLiteral("seed"), 0, std::numeric_limits<int>::max());
    m_schedule = new QLineEdit;
    m_schedule->setObjectName(QStringLiteral("scheduleSeed"));
    m_schedule->setPlaceholderText(tr("none (a run id or a schedule file)"));
    auto *browse = new QPushButton(tr("Browse…"));
    browse->setObjectName(QStringLiteral("scheduleBrowseButton"));
    connect(browse, &QPushButton::clicked, this, &NewRunDialog::browseSchedule);
    auto *scheduleRow = new QHBoxLayout;
    scheduleRow->addWidget(m_schedule, 1);
    scheduleRow->addWidget(browse);

    m_maxUsd = new QDoubleSpinBox;
    m_maxUsd->setObjectName(QStringLiteral("budgetUsd"));
    m_maxUsd->setRange(0, 1e6);
    m_maxUsd->setPrefix(QStringLiteral("$"));
    m_maxUsd->setSpecialValueText(tr("no limit"));
    m_maxCalls = spinBox(QStringLiteral("budgetCalls"), 0, std::numeric_limits<int>::max());
    m_maxCalls->setSpecialValueText(tr("no limit"));
    m_maxHours = new QDoubleSpinBox;
    m_maxHours->setObjectName(QStringLiteral("budgetHours"));
    m_maxHours->setRange(0, 10000);
    m_maxHours->setSuffix(tr(" h"));
    m_maxHours->setSpecialValueText(tr("no limit"));

    m_executor = new ExecutorEditor;
    m_sandbox = new QComboBox;
    m_sandbox->setObjectName(QStringLiteral("sandboxCombo"));
    m_sandbox->addItems({QStringLiteral("auto"), QStringLiteral("off"), QStringLiteral("required")});
    m_profile = new QCheckBox(tr("Cache profile of each candidate (callgrind; slow)"));
    m_profile->setObjectName(QStringLiteral("profile"));
    m_profile->setToolTip(tr("Runs one call of every candidate under callgrind's cache simulation and gives the planner "
                             "its D1/LL miss rates and instruction count (evaluation.profile)"));

    auto *what = new QGroupBox(tr("What to optimize"));
    auto *whatForm = new QFormLayout(what);
    whatForm->addRow(tr("&Target:"), m_target);
    whatForm->addRow(QString(), m_targetState);
    whatForm->addRow(tr("&Problem:"), m_problem);
    whatForm->addRow(tr("&Agent:"), m_agent);

    auto *models = new QGroupBox(tr("Models"));
    auto *modelsLayout = new QHBoxLayout(models);
    modelsLayout->addWidget(createModelList(QStringLiteral("planModels"), &m_planModels, tr("Plan models")));
    modelsLayout->addWidget(createModelList(QStringLiteral("codeModels"), &m_codeModels, tr("Code models (empty: the plan models)")));

    auto *search = new QGroupBox(tr("Search"));
    auto *searchForm = new QFormLayout(search);
    searchForm->addRow(tr("&Beam width (B):"), m_beamWidth);
    searchForm->addRow(tr("Plans per parent (&N):"), m_plansPerParent);
    searchForm->addRow(tr("Code per plan (&K):"), m_codePerPlan);
    searchForm->addRow(tr("&Iterations:"), m_iterations);
    searchForm->addRow(tr("Menu &dropout:"), m_dropout);
    searchForm->addRow(tr("&Fix attempts:"), m_fixAttempts);
    searchForm->addRow(tr("Edit mode:"), m_editMode);
    searchForm->addRow(tr("Feedback:"), m_feedback);
    searchForm->addRow(tr("T&ranslation iterations:"), m_translateIters);
    searchForm->addRow(tr("S&eed:"), m_seed);
    searchForm->addRow(tr("Schedule see&d:"), scheduleRow);

    auto *limits = new QGroupBox(tr("Budget and evaluation"));
    auto *limitsForm = new QFormLayout(limits);
    limitsForm->addRow(tr("Max &dollars:"), m_maxUsd);
    limitsForm->addRow(tr("Max LLM &calls:"), m_maxCalls);
    limitsForm->addRow(tr("Max &hours:"), m_maxHours);
    limitsForm->addRow(tr("&Sandbox:"), m_sandbox);
    limitsForm->addRow(tr("Profile:"), m_profile);

    m_errorsLabel = new QLabel;
    m_errorsLabel->setObjectName(QStringLiteral("validationErrors"));
    m_errorsLabel->setWordWrap(true);
    m_errorsLabel->setTextFormat(Qt::PlainText);
    m_errorsLabel->setStyleSheet(QStringLiteral("QLabel#validationErrors { color: palette(bright-text); background: #b3261e;"
                                                " border-radius: 4px; padding: 6px; }"));
    m_errorsLabel->hide();

    auto *buttons = new QDialogButtonBox;
    m_startButton = buttons->addButton(tr("&Start Run"), QDialogButtonBox::AcceptRole);
    m_startButton->setObjectName(QStringLiteral("startButton"));
    auto *cancel = buttons->addButton(QDialogButtonBox::Cancel);
    cancel->setObjectName(QStringLiteral("cancelButton"));
    auto *save = buttons->addButton(tr("Save &YAML…"), QDialogButtonBox::ActionRole);
    save->setObjectName(QStringLiteral("saveYamlButton"));
    auto *load = buttons->addButton(tr("&Load YAML…"), QDialogButtonBox::ActionRole);
    load->setObjectName(QStringLiteral("loadYamlButton"));
    connect(save, &QPushButton::clicked, this, &NewRunDialog::saveYamlClicked);
    connect(load, &QPushButton::clicked, this, &NewRunDialog::loadYamlClicked);
    connect(buttons, &QDialogButtonBox::accepted, this, [this] {
        validateNow();
        if (m_setup)
            accept();
    });
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *where = new QGroupBox(tr("Where evaluations run"));
    where->setObjectName(QStringLiteral("executorGroup"));
    auto *whereLayout = new QVBoxLayout(where);
    whereLayout->addWidget(m_executor);

    auto *columns = new QHBoxLayout;
    auto *left = new QVBoxLayout;
    left->addWidget(what);
    left->addWidget(models, 1);
    auto *right = new QVBoxLayout;
    right->addWidget(search);
    right->addWidget(limits);
    right->addWidget(where);
    right->addStretch(1);
    columns->addLayout(left, 1);
    columns->addLayout(right, 1);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(columns, 1);
    layout->addWidget(m_errorsLabel);
    layout->addWidget(buttons);

    connect(m_target, &QComboBox::currentTextChanged, this, &NewRunDialog::targetChanged);
    connect(m_executor, &ExecutorEditor::changed, this, &NewRunDialog::scheduleValidation);
    for (QComboBox *combo : {m_problem, m_agent, m_sandbox})
        connect(combo, &QComboBox::currentTextChanged, this, &NewRunDialog::scheduleValidation);
    for (QSpinBox *box : {m_beamWidth, m_plansPerParent, m_codePerPlan, m_iterations, m_fixAttempts, m_translateIters, m_seed, m_maxCalls})
        connect(box, &QSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    for (QDoubleSpinBox *box : {m_dropout, m_maxUsd, m_maxHours})
        connect(box, &QDoubleSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    connect(m_editMode, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    connect(m_feedback, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    connect(m_profile, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    connect(m_schedule, &QLineEdit::textChanged, this, &NewRunDialog::scheduleValidation);

    RunConfig defaults;
    defaults.target = m_repository.targetNames().contains(QStringLiteral("cpu")) ? QStringLiteral("cpu") : m_target->itemText(0);
    setConfig(defaults);
}

QWidget *NewRunDialog::createModelList(const QString &name, QListWidget **list, const QString &title)
{
    auto *box = new QWidget;
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addWidget(new QLabel(title));
    *list = new QListWidget;
    QListWidget *l = *list;
    l->setObjectName(name);
    l->setToolTip(tr("Model strings such as openai::gpt-5.2, anthropic::claude-opus-4-5, vllm::MODEL or "
                     "openai-compatible@URL::MODEL; double-click to edit"));
    layout->addWidget(l, 1);
    auto *buttons = new QHBoxLayout;
    auto *add = new QPushButton(tr("Add"));
    add->setObjectName(name + QStringLiteral("AddButton"));
    auto *remove = new QPushButton(tr("Remove"));
    remove->setObjectName(name + QStringLiteral("RemoveButton"));
    buttons->addWidget(add);
    buttons->addWidget(remove);
    buttons->addStretch(1);
    layout->addLayout(buttons);
    connect(add, &QPushButton::clicked, this, [l] {
        auto *item = new QListWidgetItem(QStringLiteral("openai::gpt-5.2"), l);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        l->setCurrentItem(item);
        l->editItem(item);
    });
    connect(remove, &QPushButton::clicked, this, [this, l] {
        delete l->currentItem();
        scheduleValidation();
    });
    connect(l->model(), &QAbstractItemModel::dataChanged, this, &NewRunDialog::scheduleValidation);
    connect(l->model(), &QAbstractItemModel::rowsInserted, this, &NewRunDialog::scheduleValidation);
    connect(l->model(), &QAbstractItemModel::rowsRemoved, this, &NewRunDialog::scheduleValidation);
    return box;
}

void NewRunDialog::targetChanged()
{
    const QString target = m_target->currentText();
    {
        QString error;
        const auto t = m_repository.target(target, &error);
        if (!t)
            m_targetState->setText(tr("Invalid target: %1").arg(error));
        else if (t->available())
            m_targetState->setText(tr("Available · metric %1 (%2)%3")
                                       .arg(t->metric, t->metricUnit, t->measurement.isEmpty() ? QString() : QStringLiteral(" · ") + t->measurement));
        else
            m_targetState->setText(tr("Absent on this machine: %1 not found%2")
                                       .arg(t->missingPrograms().join(QLatin1String(", ")),
                                            t->requires_.isEmpty() ? QString() : tr(" (needs %1)").arg(t->requires_)));
    }
    const QString previous = m_problem->currentText();
    {
        const QSignalBlocker blocker(m_problem);
        m_problem->clear();
        m_problem->addItems(m_repository.problemNames(target));
        m_problem->setCurrentIndex(qMax(0, m_problem->findText(previous)));
    }
    m_executor->setTarget(target);
    // An agent is usually named after its target.
    if (const int agent = m_agent->findText(target); agent >= 0)
        m_agent->setCurrentIndex(agent);
    scheduleValidation();
}

void NewRunDialog::setConfig(const RunConfig &config)
{
    m_base = config;
    if (m_target->findText(config.target) < 0)
        m_target->addItem(config.target);
    m_target->setCurrentText(config.target);
    targetChanged();
    if (!config.problem.isEmpty()) {
        if (m_problem->findText(config.problem) < 0)
            m_problem->addItem(config.problem);
        m_problem->setCurrentText(config.problem);
    }
    const QString agent = config.effectiveAgent();
    if (m_agent->findText(agent) < 0)
        m_agent->addItem(agent);
    m_agent->setCurrentText(agent);
    setItems(m_planModels, config.planModels);
    setItems(m_codeModels, config.codeModels);
    const SearchConfig &s = config.search;
    m_beamWidth->setValue(s.beamWidth);
    m_plansPerParent->setValue(s.plansPerParent);
    m_codePerPlan->setValue(s.codePerPlan);
    m_iterations->setValue(s.iterations);
    m_dropout->setValue(s.menuDropout);
    m_fixAttempts->setValue(s.fixAttempts);
    m_editMode->setChecked(s.editMode);
    m_feedback->setChecked(s.feedback);
    m_translateIters->setValue(s.translateIters);
    m_seed->setValue(int(qMin<quint64>(s.seed, quint64(std::numeric_limits<int>::max()))));
    m_schedule->setText(s.schedule);
    m_maxUsd->setValue(config.budget.maxUsd.value_or(0));
    m_maxCalls->setValue(int(qMin<qint64>(config.budget.maxLlmCalls.value_or(0), std::numeric_limits<int>::max())));
    m_maxHours->setValue(config.budget.maxHours.value_or(0));
    m_executor->setEvaluation(config.evaluation, config.target);
    m_sandbox->setCurrentText(config.evaluation.sandbox);
    m_profile->setChecked(config.evaluation.profile);
    validateNow();
}

RunConfig NewRunDialog::config() const
{
    RunConfig c = m_base;
    c.target = m_target->currentText();
    c.problem = m_problem->currentText();
    // The agent is written out only where it differs from the default (the target's name).
    c.agent = m_agent->currentText() == c.target ? QString() : m_agent->currentText();
    c.planModels = itemsOf(m_planModels);
    c.codeModels = itemsOf(m_codeModels);
    SearchConfig &s = c.search;
    s.beamWidth = m_beamWidth->value();
    s.plansPerParent = m_plansPerParent->value();
    s.codePerPlan = m_codePerPlan->value();
    s.iterations = m_iterations->value();
    s.menuDropout = m_dropout->value();
    s.fixAttempts = m_fixAttempts->value();
    s.editMode = m_editMode->isChecked();
    s.feedback = m_feedback->isChecked();
    s.translateIters = m_translateIters->value();
    // The seed box holds only int range; a larger seed from a loaded file is kept as it was.
    if (m_base.search.seed <= quint64(std::numeric_limits<int>::max()) || m_seed->value() != std::numeric_limits<int>::max())
        s.seed = quint64(m_seed->value());
    s.schedule = m_schedule->text().trimmed();
    c.budget.maxUsd = m_maxUsd->value() > 0 ? std::optional<double>(m_maxUsd->value()) : std::nullopt;
    c.budget.maxLlmCalls = m_maxCalls->value() > 0 ? std::optional<qint64>(m_maxCalls->value()) : std::nullopt;
    c.budget.maxHours = m_maxHours->value() > 0 ? std::optional<double>(m_maxHours->value()) : std::nullopt;
    m_executor->apply(&c.evaluation);
    c.evaluation.sandbox = m_sandbox->currentText();
    c.evaluation.profile = m_profile->isChecked();
    return c;
}

void NewRunDialog::scheduleValidation()
{
    m_validateTimer->start();
}

void NewRunDialog::validateNow()
{
    m_validateTimer->stop();
    const RunConfig c = config();
    QStringList errors = m_executor->errors() + c.validate();
    m_setup.reset();
    if (errors.isEmpty()) {
        const QByteArray yaml = c.toYaml();
        m_setup = prepareRun(c, yaml, m_repository, m_storePath, &errors);
    }
    m_errors = errors;
    m_errorsLabel->setText(errors.join(QLatin1Char('\n')));
    m_errorsLabel->setVisible(!errors.isEmpty());
    m_startButton->setEnabled(m_setup.has_value());
    m_startButton->setToolTip(errors.isEmpty() ? QString() : tr("Fix the problems listed above first"));
}

bool NewRunDialog::saveYaml(const QString &path, QString *error) const
{
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(config().toYaml()) < 0 || !file.commit()) {
        *error = tr("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool NewRunDialog::loadYaml(const QString &path, QStringList *errors)
{
    const std::optional<RunConfig> loaded = RunConfig::fromFile(path, errors);
    if (!loaded)
        return false;
    setConfig(*loaded);
    return true;
}

void NewRunDialog::saveYamlClicked()
{
    const QString path = QFileDialog::getSaveFileName(this, tr("Save Run Config"), QStringLiteral("%1-%2.yaml").arg(m_target->currentText(), m_problem->currentText()),
                                                      tr("YAML files (*.yaml *.yml)"));
    if (path.isEmpty())
        return;
    QString error;
    if (!saveYaml(path, &error)) {
        m_errorsLabel->setText(error);
        m_errorsLabel->show();
    }
}

void NewRunDialog::loadYamlClicked()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Load Run Config"), {}, tr("YAML files (*.yaml *.yml);;All files (*)"));
    if (path.isEmpty())
        return;
    QStringList errors;
    if (!loadYaml(path, &errors)) {
        m_errorsLabel->setText(errors.join(QLatin1Char('\n')));
        m_errorsLabel->show();
    }
}

void NewRunDialog::browseSchedule()
{
    const QString path = QFileDialog::getOpenFileName(this, tr("Schedule File"), {}, tr("YAML files (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty())
        m_schedule->setText(path);
}

} // namespace autocomp
