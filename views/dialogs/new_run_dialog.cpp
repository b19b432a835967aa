#include "dialogs/new_run_dialog.h"

#include "editors/executor_editor.h"

#include "llm/price_table.h"
#include "search/run_setup.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QScreen>
#include <QScrollArea>
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

// An error shown under the group it concerns, once the user tried to start.
QLabel *errorLabel(const QString &name)
{
    auto *label = new QLabel;
    label->setObjectName(name);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    label->setStyleSheet(QStringLiteral("QLabel { color: #d03030; }"));
    label->hide();
    return label;
}

// The providers the picker offers: those that take a key, then the local servers that need none.
QStringList pickerProviders()
{
    return SecretStore::providers() + QStringList{QStringLiteral("ollama"), QStringLiteral("openai-compatible")};
}

bool isLoopback(const QUrl &url)
{
    const QString host = url.host();
    return host == QLatin1String("localhost") || host.startsWith(QLatin1String("127.")) || host == QLatin1String("::1");
}

} // namespace

NewRunDialog::NewRunDialog(Repository repository, QString storePath, QWidget *parent)
    : QDialog(parent)
    , m_repository(std::move(repository))
    , m_storePath(std::move(storePath))
    , m_validateTimer(new QTimer(this))
    , m_secrets(new SecretStore(this))
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
            m_target->setItemData(i, t->available() ? tr("available: %1").arg(t->description) : t->absenceReason(),
                                  Qt::ToolTipRole);
        else
            m_target->setItemData(i, tr("invalid: %1").arg(error), Qt::ToolTipRole);
    }
    m_problem = new QComboBox;
    m_problem->setObjectName(QStringLiteral("problemCombo"));
    m_agent = new QComboBox;
    m_agent->setObjectName(QStringLiteral("agentCombo"));
    m_agent->addItems(m_repository.agentNames());

    m_beamWidth = spinBox(QStringLiteral("beamWidth"), 1, 64);
    m_beamWidth->setToolTip(
        tr("B: how many of the best candidates each iteration keeps and builds on (search.beam_width)"));
    m_plansPerParent = spinBox(QStringLiteral("plansPerParent"), 1, 64);
    m_plansPerParent->setToolTip(
        tr("N: optimization plans asked of the planner for each candidate in the beam, one LLM call each "
           "(search.plans_per_parent)"));
    m_codePerPlan = spinBox(QStringLiteral("codePerPlan"), 1, 64);
    m_codePerPlan->setToolTip(
        tr("K: implementations written for each plan, one LLM call and one evaluation each (search.code_per_plan)"));
    m_iterations = spinBox(QStringLiteral("iterations"), 1, 1000);
    m_iterations->setToolTip(tr("Rounds of plan, write, evaluate and select (search.iterations)"));
    m_dropout = new QDoubleSpinBox;
    m_dropout->setObjectName(QStringLiteral("menuDropout"));
    m_dropout->setRange(0, 1);
    m_dropout->setSingleStep(0.05);
    m_dropout->setToolTip(tr("Probability that a menu item is left out of one plan prompt"));
    m_fixAttempts = spinBox(QStringLiteral("fixAttempts"), 0, 10);
    m_fixAttempts->setToolTip(
        tr("F: times a candidate that does not compile or gives wrong results is sent back to the LLM with "
           "its error, one call each (search.fix_attempts)"));
    m_editMode = new QCheckBox(tr("Search/replace edits instead of whole files"));
    m_editMode->setObjectName(QStringLiteral("editMode"));
    m_editMode->setToolTip(
        tr("The LLM answers with search/replace edits of the parent's code rather than a whole file: "
           "fewer output tokens on long kernels (search.edit_mode)"));
    m_feedback = new QCheckBox(tr("Give the planner the evaluator's hardware feedback"));
    m_feedback->setObjectName(QStringLiteral("feedback"));
    m_feedback->setChecked(true);
    m_feedback->setToolTip(
        tr("Plan prompts include the evaluator's hardware feedback lines on the parent (search.feedback)"));
    m_translateIters = spinBox(QStringLiteral("translateIters"), 0, 100);
    m_translateIters->setToolTip(
        tr("First iterations that translate the starting code (e.g. PyTorch to CUDA) with the agent's "
           "translation menu before optimizing (search.translate_iters; 0: none)"));
    m_seed = spinBox(QStringLiteral("seed"), 0, std::numeric_limits<int>::max());
    m_skipPlanning = new QCheckBox(tr("Skip planning"));
    m_skipPlanning->setObjectName(QStringLiteral("skipPlanning"));
    m_skipPlanning->setToolTip(
        tr("One call writes the code directly, reasoning first and still shown the menu, instead of a plan "
           "call and then code calls: N becomes distinct prompts per parent and K samples per prompt "
           "(search.skip_planning)"));
    m_oneShotMenu = new QCheckBox(tr("One-shot menu"));
    m_oneShotMenu->setObjectName(QStringLiteral("oneShotMenu"));
    m_oneShotMenu->setToolTip(
        tr("Before planning for a parent, one extra call shows a model its code, the architecture, the ISA "
           "and the menu and asks for about 10 new strategies; they join that parent's menu before dropout "
           "(search.menu_strategy: one-shot)"));
    m_exampleRate = new QDoubleSpinBox;
    m_exampleRate->setObjectName(QStringLiteral("exampleRate"));
    m_exampleRate->setRange(0.0, 1.0);
    m_exampleRate->setSingleStep(0.05);
    m_exampleRate->setDecimals(2);
    m_exampleRate->setSpecialValueText(tr("off"));
    m_exampleRate->setToolTip(
        tr("On: once per parent a model picks the agent's code examples relevant to its code and ISA, and "
           "each picked one goes into a plan prompt with this probability (search.example_rate; Autocomp "
           "suggests 0.25). Off: every example goes in with probability 0.25, no model asked"));
    m_translateScore = new QCheckBox(tr("Score translations"));
    m_translateScore->setObjectName(QStringLiteral("translateScore"));
    m_translateScore->setChecked(true);
    m_translateScore->setToolTip(
        tr("During translation iterations a model scores each translated candidate 0-10 for completeness; "
           "a partial translation never enters the beam, and translation ends early once every beam "
           "candidate scores at least 9 (search.translate_score)"));
    m_translatePerf = new QDoubleSpinBox;
    m_translatePerf->setObjectName(QStringLiteral("translatePerfThreshold"));
    m_translatePerf->setRange(1.0, 1000.0);
    m_translatePerf->setDecimals(1);
    m_translatePerf->setValue(15.0);
    m_translatePerf->setPrefix(tr("at most "));
    m_translatePerf->setSuffix(tr("× slower"));
    m_translatePerf->setToolTip(
        tr("How much slower than its parent a translated candidate may be and still enter the beam "
           "(search.translate_perf_threshold, default 15); no effect outside translation"));
    m_seed->setToolTip(
        tr("Seeds the menu dropout and the other random choices, so a run can be repeated (search.seed)"));
    m_schedule = new QLineEdit;
    m_schedule->setObjectName(QStringLiteral("scheduleSeed"));
    m_schedule->setPlaceholderText(tr("none (a run id or a schedule file)"));
    m_schedule->setToolTip(
        tr("The menu choices along an earlier run's best path (its id) or a schedule file: the first steps "
           "follow them, then the search goes on as usual (search.schedule)"));
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
    m_maxUsd->setToolTip(tr("The run stops once its LLM calls cost this much (budget.max_usd)"));
    m_maxCalls->setToolTip(tr("The run stops after this many LLM calls (budget.max_llm_calls)"));
    m_maxHours = new QDoubleSpinBox;
    m_maxHours->setObjectName(QStringLiteral("budgetHours"));
    m_maxHours->setRange(0, 10000);
    m_maxHours->setSuffix(tr(" h"));
    m_maxHours->setSpecialValueText(tr("no limit"));
    m_maxHours->setToolTip(tr("The run stops after this much wall time (budget.max_hours)"));

    m_executor = new ExecutorEditor;
    m_sandbox = new QComboBox;
    m_sandbox->setObjectName(QStringLiteral("sandboxCombo"));
    m_sandbox->addItems({QStringLiteral("auto"), QStringLiteral("off"), QStringLiteral("required")});
    m_sandbox->setToolTip(
        tr("auto: bubblewrap when available; required: refuse to evaluate without it (evaluation.sandbox)"));
    m_profile = new QCheckBox(tr("Cache profile of each candidate (callgrind; slow)"));
    m_profile->setObjectName(QStringLiteral("profile"));
    m_profile->setToolTip(
        tr("Runs one call of every candidate under callgrind's cache simulation and gives the planner "
           "its D1/LL miss rates and instruction count (evaluation.profile)"));

    auto *what = new QGroupBox(tr("What to optimize"));
    auto *whatForm = new QFormLayout(what);
    whatForm->addRow(tr("&Target:"), m_target);
    whatForm->addRow(QString(), m_targetState);
    whatForm->addRow(tr("&Problem:"), m_problem);
    whatForm->addRow(tr("&Agent:"), m_agent);
    m_whatErrors = errorLabel(QStringLiteral("targetErrors"));
    whatForm->addRow(m_whatErrors);

    m_modelProvider = new QComboBox;
    m_modelProvider->setObjectName(QStringLiteral("modelProviderCombo"));
    m_modelProvider->setToolTip(tr("The provider of the model to add, with where its API key comes from"));
    for (const QString &provider : pickerProviders())
        m_modelProvider->addItem(provider, provider);
    m_modelName = new QComboBox;
    m_modelName->setObjectName(QStringLiteral("modelNameCombo"));
    m_modelName->setEditable(true);
    m_modelName->setInsertPolicy(QComboBox::NoInsert);
    m_modelName->setToolTip(tr("The model's name as the provider knows it; Add puts it in the plan or code models"));
    m_modelName->setSizeAdjustPolicy(QComboBox::AdjustToMinimumContentsLengthWithIcon);
    m_modelName->setMinimumContentsLength(14);
    connect(m_modelProvider, &QComboBox::currentIndexChanged, this, &NewRunDialog::fillModelNames);
    auto *picker = new QHBoxLayout;
    auto *pickerLabel = new QLabel(tr("&Model:"));
    pickerLabel->setBuddy(m_modelProvider);
    picker->addWidget(pickerLabel);
    picker->addWidget(m_modelProvider, 3);
    picker->addWidget(m_modelName, 2);
    m_modelKeys = new QLabel;
    m_modelKeys->setObjectName(QStringLiteral("modelKeyStatus"));
    m_modelKeys->setWordWrap(true);
    m_modelKeys->setTextFormat(Qt::RichText);
    m_modelKeys->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_modelErrors = errorLabel(QStringLiteral("modelErrors"));

    auto *models = new QGroupBox(tr("Models"));
    auto *modelsOuter = new QVBoxLayout(models);
    modelsOuter->addLayout(picker);
    auto *modelsLayout = new QHBoxLayout;
    modelsLayout->addWidget(createModelList(QStringLiteral("planModels"), &m_planModels, tr("Plan models")));
    modelsLayout->addWidget(
        createModelList(QStringLiteral("codeModels"), &m_codeModels, tr("Code models (empty: the plan models)")));
    modelsOuter->addLayout(modelsLayout, 1);
    modelsOuter->addWidget(m_modelKeys);
    modelsOuter->addWidget(m_modelErrors);

    auto *search = new QGroupBox(tr("Search"));
    auto *searchLayout = new QVBoxLayout(search);
    auto *searchForm = new QFormLayout;
    searchForm->addRow(tr("&Beam width (B):"), m_beamWidth);
    searchForm->addRow(tr("Plans per parent (&N):"), m_plansPerParent);
    searchForm->addRow(tr("Code per plan (&K):"), m_codePerPlan);
    searchForm->addRow(tr("&Iterations:"), m_iterations);
    searchForm->addRow(tr("Menu &dropout:"), m_dropout);
    searchForm->addRow(tr("&Fix attempts:"), m_fixAttempts);
    searchForm->addRow(tr("Edit mode:"), m_editMode);
    searchForm->addRow(tr("Feedback:"), m_feedback);
    auto *planningRow = new QHBoxLayout;
    planningRow->addWidget(m_skipPlanning);
    planningRow->addWidget(m_oneShotMenu);
    planningRow->addStretch(1);
    searchForm->addRow(tr("Planning:"), planningRow);
    searchForm->addRow(tr("E&xample rate:"), m_exampleRate);
    searchForm->addRow(tr("T&ranslation iterations:"), m_translateIters);
    auto *translationRow = new QHBoxLayout;
    translationRow->addWidget(m_translateScore);
    translationRow->addWidget(m_translatePerf, 1);
    searchForm->addRow(tr("Translation:"), translationRow);
    searchForm->addRow(tr("S&eed:"), m_seed);
    // A label given a layout has no buddy, and would show its '&': the buddy is set by hand.
    auto *scheduleLabel = new QLabel(tr("Sched&ule seed:"));
    scheduleLabel->setBuddy(m_schedule);
    searchForm->addRow(scheduleLabel, scheduleRow);
    m_estimate = new QLabel;
    m_estimate->setObjectName(QStringLiteral("runEstimate"));
    m_estimate->setWordWrap(true);
    m_estimate->setToolTip(
        tr("Upper bounds: the first iteration starts from one candidate, and fixes are sent only for "
           "candidates that fail to compile or give wrong results"));
    m_searchErrors = errorLabel(QStringLiteral("searchErrors"));
    // Below the form, not in a spanning row: QFormLayout gives a wrapped label too little height.
    searchLayout->addLayout(searchForm);
    searchLayout->addWidget(m_estimate);
    searchLayout->addWidget(m_searchErrors);

    auto *limits = new QGroupBox(tr("Budget and evaluation"));
    auto *limitsForm = new QFormLayout(limits);
    limitsForm->addRow(tr("Max d&ollars:"), m_maxUsd);
    limitsForm->addRow(tr("Max LLM &calls:"), m_maxCalls);
    limitsForm->addRow(tr("Max &hours:"), m_maxHours);
    limitsForm->addRow(tr("Sandbo&x:"), m_sandbox);
    limitsForm->addRow(tr("Profile:"), m_profile);
    m_limitsErrors = errorLabel(QStringLiteral("limitsErrors"));
    limitsForm->addRow(m_limitsErrors);

    m_errorsLabel = new QLabel;
    m_errorsLabel->setObjectName(QStringLiteral("validationErrors"));
    m_errorsLabel->setWordWrap(true);
    m_errorsLabel->setTextFormat(Qt::PlainText);
    m_errorsLabel->setStyleSheet(QStringLiteral("QLabel#validationErrors { color: #d03030; }"));
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
    connect(buttons, &QDialogButtonBox::accepted, this, &NewRunDialog::startClicked);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *where = new QGroupBox(tr("Where evaluations run"));
    where->setObjectName(QStringLiteral("executorGroup"));
    auto *whereLayout = new QVBoxLayout(where);
    whereLayout->addWidget(m_executor);
    m_executorErrors = errorLabel(QStringLiteral("executorErrors"));
    whereLayout->addWidget(m_executorErrors);

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
    // The form scrolls; the problems found and the buttons stay pinned below it, so Start and Cancel are
    // always in reach on a small screen (an ssh or slurm executor makes the form taller than 800 px).
    auto *form = new QWidget;
    form->setObjectName(QStringLiteral("newRunForm"));
    form->setLayout(columns);
    auto *scroll = new QScrollArea;
    scroll->setObjectName(QStringLiteral("newRunScroll"));
    scroll->setWidget(form);
    scroll->setWidgetResizable(true);
    scroll->setFrameShape(QFrame::NoFrame);
    scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    auto *layout = new QVBoxLayout(this);
    layout->addWidget(scroll, 1);
    layout->addWidget(m_errorsLabel);
    layout->addWidget(buttons);
    // As tall as the form wants, but never taller than the screen: the rest scrolls.
    if (QScreen *where = parent ? parent->screen() : screen()) {
        const QRect available = where->availableGeometry();
        const QSize wanted = form->sizeHint() + QSize(40, buttons->sizeHint().height() + 60);
        resize(std::min(wanted.width(), available.width() - 40), std::min(wanted.height(), available.height() - 80));
    }

    connect(m_target, &QComboBox::currentTextChanged, this, &NewRunDialog::targetChanged);
    connect(m_executor, &ExecutorEditor::changed, this, &NewRunDialog::scheduleValidation);
    for (QComboBox *combo : {m_problem, m_agent, m_sandbox})
        connect(combo, &QComboBox::currentTextChanged, this, &NewRunDialog::scheduleValidation);
    for (QSpinBox *box : {m_beamWidth, m_plansPerParent, m_codePerPlan, m_iterations, m_fixAttempts, m_translateIters,
                          m_seed, m_maxCalls})
        connect(box, &QSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    for (QDoubleSpinBox *box : {m_dropout, m_maxUsd, m_maxHours})
        connect(box, &QDoubleSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    connect(m_editMode, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    connect(m_feedback, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    for (QCheckBox *box : {m_skipPlanning, m_oneShotMenu, m_translateScore})
        connect(box, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    for (QDoubleSpinBox *box : {m_exampleRate, m_translatePerf})
        connect(box, &QDoubleSpinBox::valueChanged, this, &NewRunDialog::scheduleValidation);
    connect(m_profile, &QCheckBox::toggled, this, &NewRunDialog::scheduleValidation);
    connect(m_schedule, &QLineEdit::textChanged, this, &NewRunDialog::scheduleValidation);

    // Each provider's keychain entry, read once; the environment is looked at whenever the state is shown.
    connect(m_secrets, &SecretStore::keyRead, this,
            [this](const QString &provider, const QString &, KeyStatus status, const QString &) {
                m_stored.insert(provider, status);
                updateKeyState();
            });
    for (const QString &provider : SecretStore::providers())
        if (SecretStore::keyRequired(provider))
            m_secrets->readStoredKey(provider);
    fillModelNames();

    RunConfig defaults;
    defaults.target = m_repository.targetNames().contains(QStringLiteral("cpu")) ? QStringLiteral("cpu")
                                                                                 : m_target->itemText(0);
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
    add->setToolTip(tr("Adds the model picked above; double-click an entry to edit it"));
    connect(add, &QPushButton::clicked, this, [this, l] {
        auto *item = new QListWidgetItem(pickedModel(), l);
        item->setFlags(item->flags() | Qt::ItemIsEditable);
        l->setCurrentItem(item);
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
            m_targetState->setText(
                tr("Available · metric %1 (%2)%3")
                    .arg(t->metric, t->metricUnit,
                         t->measurement.isEmpty() ? QString() : QStringLiteral(" · ") + t->measurement));
        else if (!t->missingPrograms().isEmpty())
            m_targetState->setText(tr("Absent on this machine: %1 not found%2")
                                       .arg(t->missingPrograms().join(QLatin1String(", ")),
                                            t->requires_.isEmpty() ? QString() : tr(" (needs %1)").arg(t->requires_)));
        else
            m_targetState->setText(t->absenceReason()); // its check failed: the check's own reason
        // Where its tools were found outside the system's folders (a setting, a toolchain under /opt): the steps
        // get them on PATH and see them in the sandbox.
        if (t) {
            if (const QStringList tools = t->toolNotes(); !tools.isEmpty())
                m_targetState->setText(m_targetState->text() + QStringLiteral("\n")
                                       + tr("Tools: %1").arg(tools.join(QStringLiteral("; "))));
        }
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
    m_skipPlanning->setChecked(s.skipPlanning);
    m_oneShotMenu->setChecked(s.menuStrategy == QLatin1String("one-shot"));
    m_exampleRate->setValue(s.exampleRate.value_or(0.0));
    m_translateScore->setChecked(s.translateScore);
    m_translatePerf->setValue(s.translatePerfThreshold);
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
    s.skipPlanning = m_skipPlanning->isChecked();
    s.menuStrategy = m_oneShotMenu->isChecked() ? QStringLiteral("one-shot") : QString();
    // 0 is "off"; an example_rate of 0 loaded from a file is kept as it was.
    if (m_exampleRate->value() > 0 || !(m_base.search.exampleRate && *m_base.search.exampleRate == 0))
        s.exampleRate = m_exampleRate->value() > 0 ? std::optional<double>(m_exampleRate->value()) : std::nullopt;
    s.translateScore = m_translateScore->isChecked();
    s.translatePerfThreshold = m_translatePerf->value();
    // The seed box holds only int range; a larger seed from a loaded file is kept as it was.
    if (m_base.search.seed <= quint64(std::numeric_limits<int>::max())
        || m_seed->value() != std::numeric_limits<int>::max())
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

void NewRunDialog::scheduleValidation() { m_validateTimer->start(); }

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
    if (m_attempted)
        showErrors();
    updateEstimate();
    updateKeyState();
}

void NewRunDialog::startClicked()
{
    m_attempted = true;
    validateNow();
    if (m_setup && m_keyProblem.isEmpty()) {
        accept();
        return;
    }
    // The first field concerned takes the focus.
    if (m_whatErrors->isVisibleTo(this))
        m_target->setFocus();
    else if (m_modelErrors->isVisibleTo(this))
        m_planModels->setFocus();
    else if (m_searchErrors->isVisibleTo(this))
        m_beamWidth->setFocus();
}

void NewRunDialog::showErrors()
{
    QStringList what;
    QStringList models;
    QStringList search;
    QStringList limits;
    QStringList where = m_executor->errors();
    for (const QString &error : std::as_const(m_errors)) {
        if (where.contains(error))
            continue;
        // RunConfig names the key it checks ('search.beam_width'); prepareRun names models.plan / models.code.
        if (error.startsWith(QLatin1String("models.")) || error.startsWith(QLatin1String("'models.")))
            models << error;
        else if (error.startsWith(QLatin1String("'search.")))
            search << error;
        else if (error.startsWith(QLatin1String("'budget.")))
            limits << error;
        else if (error.startsWith(QLatin1String("'evaluation.")))
            where << error;
        else
            what << error; // the target, the problem, the agent
    }
    const auto show = [](QLabel *label, const QStringList &lines) {
        label->setText(lines.join(QLatin1Char('\n')));
        label->setVisible(!lines.isEmpty());
    };
    show(m_whatErrors, what);
    show(m_modelErrors, models);
    show(m_searchErrors, search);
    show(m_limitsErrors, limits);
    show(m_executorErrors, where);
}

void NewRunDialog::fillModelNames()
{
    const QString provider = m_modelProvider->currentData().toString();
    // The models the price table knows for the provider; any other name can be typed.
    QStringList names;
    const QString prefix = provider + QStringLiteral("::");
    const PriceTable prices = PriceTable::loadDefault();
    for (auto it = prices.entries().cbegin(), end = prices.entries().cend(); it != end; ++it)
        if (it.key().startsWith(prefix))
            names << it.key().mid(prefix.size());
    names.sort();
    m_modelName->clear();
    m_modelName->addItems(names);
    if (provider == QLatin1String("openai-compatible"))
        m_modelName->lineEdit()->setPlaceholderText(QStringLiteral("http://host:port/v1::MODEL"));
    else if (names.isEmpty())
        m_modelName->lineEdit()->setPlaceholderText(tr("MODEL, as the server names it"));
    else
        m_modelName->lineEdit()->setPlaceholderText(QString());
    // A common default first: the provider's current flagship where the price table has it.
    for (const QString &preferred :
         {QStringLiteral("gpt-5.2"), QStringLiteral("claude-opus-4-5"), QStringLiteral("gemini-2.5-pro")})
        if (const int index = m_modelName->findText(preferred); index >= 0)
            m_modelName->setCurrentIndex(index);
    if (names.isEmpty())
        m_modelName->setEditText(QString());
}

QString NewRunDialog::pickedModel() const
{
    const QString provider = m_modelProvider->currentData().toString();
    const QString name = m_modelName->currentText().trimmed();
    if (provider == QLatin1String("openai-compatible"))
        return QStringLiteral("openai-compatible@")
            + (name.isEmpty() ? QStringLiteral("http://localhost:8000/v1::MODEL") : name);
    return provider + QStringLiteral("::") + (name.isEmpty() ? QStringLiteral("MODEL") : name);
}

QString NewRunDialog::providerKeyState(const QString &provider, bool *missing) const
{
    *missing = false;
    QString variable;
    if (SecretStore::hasEnvironmentCredentials(provider, &variable))
        return tr("key from %1").arg(variable);
    if (!SecretStore::keyRequired(provider))
        return tr("local server, no key needed");
    const auto stored = m_stored.constFind(provider);
    if (stored == m_stored.cend())
        return tr("checking the keychain…");
    if (*stored == KeyStatus::Stored)
        return tr("key stored in the keychain");
    *missing = true;
    return tr("key missing: set %1").arg(ModelSpec::apiKeyVariable(provider));
}

QString NewRunDialog::modelKeyState(const ModelSpec &spec, bool *missing) const
{
    const QString state = providerKeyState(spec.provider, missing);
    // A server on this machine speaking a hosted provider's protocol takes no key either.
    if (*missing && isLoopback(spec.baseUrl)) {
        *missing = false;
        return tr("local server, no key needed");
    }
    return state;
}

void NewRunDialog::updateKeyState()
{
    for (int i = 0; i < m_modelProvider->count(); ++i) {
        const QString provider = m_modelProvider->itemData(i).toString();
        bool missing = false;
        const QString state = providerKeyState(provider, &missing);
        m_modelProvider->setItemText(i, QStringLiteral("%1 — %2").arg(provider, state));
        m_modelProvider->setItemData(
            i, missing && SecretStore::keychainReachable() ? tr("%1, or store a key in Settings").arg(state) : state,
            Qt::ToolTipRole);
    }

    QStringList chosen = itemsOf(m_planModels);
    for (const QString &code : itemsOf(m_codeModels))
        if (!chosen.contains(code))
            chosen << code;
    QStringList lines;
    QStringList withoutKey;
    for (const QString &text : std::as_const(chosen)) {
        QString error;
        const std::optional<ModelSpec> spec = ModelSpec::parse(text, &error);
        if (!spec)
            continue; // said by the validation, next to the models
        bool missing = false;
        const QString state = modelKeyState(*spec, &missing);
        const QString line = QStringLiteral("%1: %2").arg(text.toHtmlEscaped(), state.toHtmlEscaped());
        lines << (missing ? QStringLiteral("<span style=\"color:#d03030\">%1</span>").arg(line) : line);
        if (missing)
            withoutKey << (SecretStore::keychainReachable()
                               ? tr("%1 has no API key: set %2 in the environment or store a key in Settings")
                               : tr("%1 has no API key: set %2 in the environment (there is no keychain here)"))
                              .arg(text, ModelSpec::apiKeyVariable(spec->provider));
    }
    const QString keys = lines.join(QStringLiteral("<br>"));
    if (m_modelKeys->text() != keys)
        m_modelKeys->setText(keys);
    m_modelKeys->setVisible(!lines.isEmpty());
    m_keyProblem = withoutKey.join(QLatin1Char('\n'));
    m_startButton->setEnabled(m_keyProblem.isEmpty());
    m_startButton->setToolTip(m_keyProblem);
}

void NewRunDialog::updateEstimate()
{
    const qint64 b = m_beamWidth->value();
    const qint64 n = m_plansPerParent->value();
    const qint64 k = m_codePerPlan->value();
    const qint64 f = m_fixAttempts->value();
    const qint64 iterations = m_iterations->value();
    const qint64 plans = b * n;
    const qint64 candidates = plans * k;
    // One call per parent each for the one-shot menu and the example choice; none for plans when they are skipped.
    const qint64 perParent = (m_oneShotMenu->isChecked() ? 1 : 0) + (m_exampleRate->value() > 0 ? 1 : 0);
    const qint64 calls = (m_skipPlanning->isChecked() ? 0 : plans) + candidates + b * perParent;
    QString text = m_skipPlanning->isChecked()
        ? tr("Per iteration: up to B×N×K = %1×%2×%3 = %4 candidates; %4 code calls (planning skipped)")
              .arg(b)
              .arg(n)
              .arg(k)
              .arg(candidates)
        : tr("Per iteration: up to B×N×K = %1×%2×%3 = %4 candidates; %5 plan + %4 code = %6 LLM calls")
              .arg(b)
              .arg(n)
              .arg(k)
              .arg(candidates)
              .arg(plans)
              .arg(plans + candidates);
    if (perParent > 0)
        text += tr(", %1 per parent for the one-shot menu and example choice (%2 in all)").arg(perParent).arg(calls);
    if (f > 0)
        text +=
            tr(", and at most F = %1 fix call(s) per candidate (%2 more)", nullptr, int(f)).arg(f).arg(candidates * f);
    text += QLatin1Char('\n');
    text += tr("%n iteration(s): up to %1 candidates and %2 LLM calls", nullptr, int(iterations))
                .arg(candidates * iterations)
                .arg(calls * iterations);
    if (f > 0)
        text += tr(" (%1 with every fix)").arg((calls + candidates * f) * iterations);
    m_estimate->setText(text);
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
    const QString path = QFileDialog::getSaveFileName(
        this, tr("Save Run Config"),
        QStringLiteral("%1-%2.yaml").arg(m_target->currentText(), m_problem->currentText()),
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
    const QString path = QFileDialog::getOpenFileName(this, tr("Load Run Config"), {},
                                                      tr("YAML files (*.yaml *.yml);;All files (*)"));
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
    const QString path = QFileDialog::getOpenFileName(this, tr("Schedule File"), {},
                                                      tr("YAML files (*.yaml *.yml);;All files (*)"));
    if (!path.isEmpty())
        m_schedule->setText(path);
}

} // namespace autocomp
